import { ProjectionEventError } from './projection-event-error';

describe('ProjectionEventError', () => {
  it('names the projection, the event and what it threw, and keeps the cause', () => {
    const cause = new TypeError("Cannot read properties of undefined (reading 'id')");
    const event = {
      id: 'e9',
      streamName: 'boom-acme.b',
      revision: 0,
      position: '00000000000000000009',
      type: 'Boom',
      data: {},
      metadata: { occurred_at: 't' },
      recordedAt: 't',
    };
    const error = new ProjectionEventError('fragile_v1', event, cause);
    expect(error.message).toBe(
      "Projection fragile_v1 failed on event Boom at position 00000000000000000009 (boom-acme.b): Cannot read properties of undefined (reading 'id')",
    );
    expect([error.name, error.projection, error.event, error.cause]).toEqual(['ProjectionEventError', 'fragile_v1', event, cause]);
    expect(new ProjectionEventError('p_v1', event, 'a string').message).toMatch(/: a string$/);
  });
});
