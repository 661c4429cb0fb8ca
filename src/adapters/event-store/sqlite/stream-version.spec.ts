import { countedEvent as event, twoLogConnections } from '../../../../test/support/two-log-connections';

/**
 * A stream's version (the write side's states are served without reading while it is unchanged,
 * StreamStates): it must change after every append to the stream, this store's at once, another
 * connection's (the admin CLI, an import beside the server) from the next turn of the event loop.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('SqliteEventStore.streamVersion', () => {
  const { server, cli } = twoLogConnections('parley-stream-version-');

  it('stays the same while nothing is appended to the stream, whatever this store appends to others', async () => {
    await server().append('count-a', [event(0)], 'no_stream');
    const before = server().streamVersion('count-a');
    for (let n = 0; n < 5; n++) {
      await server().append(`count-other-${n}`, [event(n)], 'no_stream');
      await nextTurn();
      expect(server().streamVersion('count-a')).toBe(before);
    }
  });

  it("changes at once after this store's own append to the stream, in the same turn", async () => {
    await server().append('count-a', [event(0)], 'no_stream');
    for (let n = 1; n < 10; n++) {
      const before = server().streamVersion('count-a');
      await server().append('count-a', [event(n)], n - 1);
      expect(server().streamVersion('count-a')).not.toBe(before);
    }
  });

  it("changes by the next turn after another connection's append to the stream, every time, whatever came between", async () => {
    await cli().append('count-a', [event(0)], 'no_stream');
    for (let n = 1; n < 20; n++) {
      await nextTurn();
      const before = server().streamVersion('count-a');
      // Asked again in the same turn as often as a busy server asks.
      for (let i = 0; i < 3; i++) expect(server().streamVersion('count-a')).toBe(before);
      await server().append(`count-b-${n}`, [event(n)], 'no_stream');
      await cli().append('count-a', [event(n)], n - 1);
      await nextTurn();
      expect(server().streamVersion('count-a')).not.toBe(before);
    }
  });

  it('answers undefined once closed (nothing can be known)', async () => {
    await server().close();
    expect(server().streamVersion('count-a')).toBeUndefined();
  });
});
