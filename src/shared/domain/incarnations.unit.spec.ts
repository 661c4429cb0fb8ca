import { incarnationAt } from './incarnations';

const historyOf = (events: { type: string; data: unknown }[]) => ({
  readStream: async (_stream: string, { fromRevision, maxCount }: { fromRevision: number; maxCount: number }) => events.slice(fromRevision, fromRevision + maxCount),
});

describe('incarnationAt', () => {
  const stream = [
    { type: 'UserCreated', data: { created_at: '2026-01-01' } },
    { type: 'UserUpdated', data: { updated_at: '2026-01-02' } },
    { type: 'UserDeleted', data: { deleted_at: '2026-01-03' } },
    ...Array.from({ length: 1_500 }, () => ({ type: 'UserUpdated', data: { updated_at: '2026-01-04' } })),
    { type: 'UserCreated', data: { created_at: '2026-02-01' } },
  ];

  it('names the latest creation at or before the time, across pages', async () => {
    expect(await incarnationAt(historyOf(stream), 's', 'UserCreated', '2026-01-02')).toBe('2026-01-01');
    expect(await incarnationAt(historyOf(stream), 's', 'UserCreated', '2026-01-03')).toBe('2026-01-01');
    expect(await incarnationAt(historyOf(stream), 's', 'UserCreated', '2026-02-01')).toBe('2026-02-01');
    expect(await incarnationAt(historyOf(stream), 's', 'UserCreated', '2026-03-01')).toBe('2026-02-01');
  });

  it('names none before the first creation, or in a stream without one', async () => {
    expect(await incarnationAt(historyOf(stream), 's', 'UserCreated', '2025-12-31')).toBeUndefined();
    expect(await incarnationAt(historyOf([]), 's', 'UserCreated', '2026-01-01')).toBeUndefined();
    expect(await incarnationAt(historyOf(stream), 's', 'RoomCreated', '2026-03-01')).toBeUndefined();
  });
});
