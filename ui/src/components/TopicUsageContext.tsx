import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { TopicStatus, TopicUsage } from '../protocol.gen';
import { useBackend } from './BackendContext';

interface TopicUsageValue {
  topicId: string;
  /** Undefined until read. */
  usage: TopicUsage | undefined;
}

/** The open topic's usage (its total and each reply's), for the reply footers and the header. */
const TopicUsageContext = createContext<TopicUsageValue | undefined>(undefined);

/** Undefined outside a topic that keeps usage (e.g. an agent session's view). */
export function useTopicUsage(): TopicUsageValue | undefined {
  return useContext(TopicUsageContext);
}

interface TopicUsageProviderProps {
  topicId: string;
  /** The topic's status: a change (a reply started or ended) reads the usage again. */
  status: TopicStatus | undefined;
  /** Counts the topic's settled replies: each one reads the usage again. */
  settledCount: number;
  children: ReactNode;
}

/**
 * Reads the topic's usage when it opens, whenever its status changes and whenever a reply
 * settles (each model call is in the ledger before its reply ends). A failed read keeps what was shown: usage is
 * a note under the replies, never in their way.
 */
export function TopicUsageProvider({ topicId, status, settledCount, children }: TopicUsageProviderProps) {
  const backend = useBackend();
  const [usage, setUsage] = useState<TopicUsage>();
  useEffect(() => {
    let current = true;
    backend
      .call('usage_topic', { topicId })
      .then((loaded) => {
        if (current) setUsage(loaded);
      })
      .catch((failure: unknown) => {
        console.warn('could not read the topic usage', failure);
      });
    return () => {
      current = false;
    };
  }, [backend, topicId, status, settledCount]);
  const value = useMemo(() => ({ topicId, usage: usage?.topicId === topicId ? usage : undefined }), [topicId, usage]);
  return <TopicUsageContext.Provider value={value}>{children}</TopicUsageContext.Provider>;
}
