import { MongoRateCounters } from '../../src/adapters/rate-counters/mongo/mongo-rate-counters';
import { rateCounterContract } from './rate-counter.contract';
import { describeWithEnv } from './skip-unless-env';

describeWithEnv('MONGODB_URI', 'MongoDB rate-counter contract suite', (uri) =>
  rateCounterContract('MongoRateCounters', () => MongoRateCounters.connect(uri, 'parley_contract')),
);
