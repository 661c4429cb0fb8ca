import { MongoRateCounters } from '../../src/adapters/rate-counters/mongo/mongo-rate-counters';
import { rateCounterContract } from './rate-counter.contract';
import { describeWithEnv } from './skip-unless-env';

// The contract is about counting: a budget far above the per-call default, so that a busy CI
// machine cannot turn a slow call into a failed one (the budget's own spec is beside the adapter).
describeWithEnv('MONGODB_URI', 'MongoDB rate-counter contract suite', (uri) =>
  rateCounterContract('MongoRateCounters', () => MongoRateCounters.connect(uri, 'parley_contract', { budgetMs: 30_000 })),
);
