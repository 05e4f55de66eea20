import { costLabel, formatCount, formatTokensShort, totalTokens } from '../usage/format';
import { useTopicUsage } from './TopicUsageContext';

/** In the topic header: what the whole topic used (every version of every reply) and cost. */
export function TopicUsageTotal() {
  const topic = useTopicUsage();
  const total = topic?.usage?.total;
  if (!total || total.calls === 0) return null;
  const cost = costLabel(total);
  const title =
    `${formatCount(total.inputTokens)} input and ${formatCount(total.outputTokens)} output tokens over ` +
    `${total.calls} model call${total.calls === 1 ? '' : 's'}, every version of every reply` +
    (total.unpricedCalls > 0 ? `; ${total.unpricedCalls} call(s) used a model without a price` : '');
  return (
    <span className="topic-usage" data-testid="topic-usage" title={title}>
      {formatTokensShort(totalTokens(total))} tokens{cost !== undefined && ` · ${cost}`}
    </span>
  );
}
