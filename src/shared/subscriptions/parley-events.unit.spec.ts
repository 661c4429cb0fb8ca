import { DomainError } from '../domain/errors';
import { parseEventFamilies } from './parley-events';

describe('parseEventFamilies (?parley_events=)', () => {
  const families = ['edits', 'mutes'] as const;

  it('asks for nothing when absent or empty; reads the comma-separated families it knows', () => {
    expect([...parseEventFamilies(null, families)]).toEqual([]);
    expect([...parseEventFamilies(' ', families)]).toEqual([]);
    expect([...parseEventFamilies('mutes, edits', families)]).toEqual(['mutes', 'edits']);
  });

  it('refuses a family the subscription does not know, naming it and the known ones; a subscription with none refuses any', () => {
    const refusal = (raw: string, known: readonly string[]) => {
      try {
        parseEventFamilies(raw, known);
      } catch (error) {
        return error instanceof DomainError ? { status: error.status, code: error.code, description: error.description } : error;
      }
      return 'accepted';
    };
    expect(refusal('edits,gossip', families)).toEqual({
      status: 422,
      code: 'unprocessable_entity/invalid_parley_events',
      description: 'parley_events names event families from: edits, mutes (unknown: gossip)',
    });
    expect(refusal('mutes', [])).toMatchObject({ status: 422, description: 'This subscription takes no parley_events (unknown: mutes)' });
  });
});
