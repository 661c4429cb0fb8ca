import { countedEvent as event, twoLogConnections } from '../../../../test/support/two-log-connections';

/**
 * Whether another writer appended (the admin CLI or an import beside the embedded server): the
 * server's keyed requests wait for the whole log's head only then (IdempotentRequests).
 */

describe('SqliteEventStore.appendedElsewhere', () => {
  const { server, cli } = twoLogConnections('parley-appended-elsewhere-');

  // It may also say yes after the checkpoint thread's checkpoint (another connection): never no after another writer's append.
  it("says yes after another connection's append, every time, whatever came between", async () => {
    for (let n = 0; n < 20; n++) {
      await server().append('count-a', [event(n)], n === 0 ? 'no_stream' : n - 1);
      server().appendedElsewhere();
      await cli().append(`count-b-${n}`, [event(n)], 'no_stream');
      expect(server().appendedElsewhere()).toBe(true);
    }
  });

  it('says yes when closed (nothing can be known)', async () => {
    await server().close();
    expect(server().appendedElsewhere()).toBe(true);
  });
});
