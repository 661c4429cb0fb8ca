import { DomainError } from '../../shared/domain/errors';
import { guardOf, guardRequest, releaseRequest } from '../../shared/application/write-path/idempotency-guards';
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

  it("stamps a guarded request's commands with its record, one request per id, and says whether any command was stamped", () => {
    const record = { key: 'k', request: 'r', expires_at: '2026-01-02T00:00:00.000Z' };
    expect(guardRequest('req-1', record)).toBe(true);
    expect(guardRequest('req-1', { ...record, key: 'other' })).toBe(false);
    expect(guardOf('req-2')).toBeUndefined();
    expect(guardOf(undefined)).toBeUndefined();
    expect(guardOf('req-1')).toBe(record);
    expect(releaseRequest('req-1')).toBe(true);
    expect(guardOf('req-1')).toBeUndefined();
    guardRequest('req-3', record);
    expect(releaseRequest('req-3')).toBe(false);
  });
});
