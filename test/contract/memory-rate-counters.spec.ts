import { MemoryRateCounters } from '../../src/adapters/rate-counters/memory/memory-rate-counters';
import { rateCounterContract } from './rate-counter.contract';

rateCounterContract('MemoryRateCounters', async () => new MemoryRateCounters());
