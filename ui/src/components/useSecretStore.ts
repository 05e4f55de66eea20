import { useEffect, useState } from 'react';
import { useBackend } from './BackendContext';

/** Where the backend keeps API keys, in words (`app_info`); undefined until read or if unknown. */
export function useSecretStore(): string | undefined {
  const backend = useBackend();
  const [where, setWhere] = useState<string>();
  useEffect(() => {
    let current = true;
    backend
      .call('app_info')
      .then((info) => {
        if (current && info.secretStore) setWhere(info.secretStore);
      })
      .catch(() => {
        // Only the sentence about key storage is left out.
      });
    return () => {
      current = false;
    };
  }, [backend]);
  return where;
}
