import { createContext } from 'react';

/**
 * The user asked (with ↑ in an empty message box) to edit one of their messages: that
 * message opens its editor. A new request is a new object.
 */
export interface EditRequest {
  messageId: string;
  /** Called when that editor closes (sent or cancelled): the focus goes back to the message box. */
  done: () => void;
}

export const EditRequestContext = createContext<EditRequest | undefined>(undefined);
