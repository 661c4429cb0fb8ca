import { DomainError } from '../../shared/domain/errors';
import { answerShows, guardOf, guardRequest, noteAppended, releaseRequest } from '../../shared/application/write-path/idempotency-guards';
import { idempotencyKeyOf, requestFingerprint, scopedKeyId } from './idempotency-key';

const reasonOf = (f: () => unknown): string => {
  try {
    f();
  } catch (error) {
    return (error as DomainError).code;
  }
  return 'accepted';
};

describe('Idempotency-Key', () => {
  it('takes 1 to 255 visible ASCII characters and refuses anything else with 400 invalid_idempotency_key', () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined();
    expect(idempotencyKeyOf('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(idempotencyKeyOf('x'.repeat(255))).toBe('x'.repeat(255));
    for (const bad of ['', 'x'.repeat(256), 'has space', 'tab\t', 'é', ['a', 'b']]) {
      expect(reasonOf(() => idempotencyKeyOf(bad))).toBe('bad_request/invalid_idempotency_key');
    }
  });

  it('scopes a key to its instance, subject and route, and keeps no key as sent', () => {
    const scope = { instanceId: 'acme', subject: 'user:ann', route: 'POST /rooms/:roomId/messages' };
    const id = scopedKeyId(scope, 'k1');
    expect(id).not.toContain('k1');
    expect(scopedKeyId(scope, 'k1')).toBe(id);
    for (const other of [{ ...scope, instanceId: 'other' }, { ...scope, subject: 'user:bob' }, { ...scope, route: 'PUT /users/:userId' }]) {
      expect(scopedKeyId(other, 'k1')).not.toBe(id);
    }
    expect(scopedKeyId(scope, 'k2')).not.toBe(id);
  });

  it('tells requests apart by method, path with query, and body', () => {
    const one = requestFingerprint('POST', '/a?x=1', { text: 'hi' });
    expect(requestFingerprint('POST', '/a?x=1', { text: 'hi' })).toBe(one);
    expect(requestFingerprint('PUT', '/a?x=1', { text: 'hi' })).not.toBe(one);
    expect(requestFingerprint('POST', '/a?x=2', { text: 'hi' })).not.toBe(one);
    expect(requestFingerprint('POST', '/a?x=1', { text: 'ho' })).not.toBe(one);
    expect(requestFingerprint('POST', '/a?x=1', undefined)).not.toBe(one);
  });

  it("stamps a guarded request's commands with its record, one request per id, and tells what they appended", () => {
    const record = { key: 'k', request: 'r', expires_at: '2026-01-02T00:00:00.000Z' };
    expect(guardRequest('req-1', record)).toBe(true);
    expect(guardRequest('req-1', { ...record, key: 'other' })).toBe(false);
    expect(guardOf('req-2')).toBeUndefined();
    expect(guardOf(undefined)).toBeUndefined();
    expect(guardOf('req-1')).toBe(record);
    const event = (type: string, metadata: Record<string, unknown>) => ({ type, data: { type }, metadata: { occurred_at: 'now', ...metadata } });
    noteAppended('room-a', [
      event('RoomCreated', { request_id: 'req-1', idempotency: record }),
      event('UserJoinedRoom', { request_id: 'req-1', idempotency: record }),
      // Another request's, or the same id with another record (an earlier request of that id): not this one's.
      event('Other', { request_id: 'req-2' }),
      event('Earlier', { request_id: 'req-1', idempotency: { ...record } }),
    ], 'p-7');
    noteAppended('user-b', [event('UserCreated', { request_id: 'req-1', idempotency: record })], 'p-9');
    answerShows('req-1', ['key-of-what-it-shows']);
    answerShows('req-2', ['not guarded']);
    expect(releaseRequest('req-1')).toEqual({
      appended: [
        { stream: 'room-a', events: [{ type: 'RoomCreated', data: { type: 'RoomCreated' } }, { type: 'UserJoinedRoom', data: { type: 'UserJoinedRoom' } }], position: 'p-7' },
        { stream: 'user-b', events: [{ type: 'UserCreated', data: { type: 'UserCreated' } }], position: 'p-9' },
      ],
      shows: ['key-of-what-it-shows'],
    });
    expect(guardOf('req-1')).toBeUndefined();
    // Stamped, nothing known durable yet: nothing appended; never stamped: null.
    guardRequest('req-3', record);
    guardOf('req-3');
    expect(releaseRequest('req-3')).toEqual({ appended: [], shows: [] });
    guardRequest('req-4', record);
    expect(releaseRequest('req-4')).toBeNull();
  });
});
