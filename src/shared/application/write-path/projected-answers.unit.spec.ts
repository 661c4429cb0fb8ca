import { DomainError } from '../../domain/errors';
import { DomainEvent, LogPosition } from '../../domain/event';
import { CommandOutcome, DecidedCommand, QueuedCommand } from './batch-decision';
import { answerOnceProjected } from './projected-answers';
import { AwaitedProjections, projectionLagError, ReadYourWrites } from './read-your-writes';

/** A decided command and what it is answered. */
const decidedCommand = (types: string[], awaitProjections?: readonly string[]) => {
  const item = {} as QueuedCommand;
  const answered = new Promise<CommandOutcome<unknown, DomainEvent>>((resolve, reject) => Object.assign(item, { resolve, reject, awaitProjections }));
  const events = types.map((type) => ({ type, data: {} }));
  const decided: DecidedCommand = { item, events, state: { decided: types }, toAppend: [] };
  return { decided, answered };
};

/** Read models that show every position once the test says so, recording each wait. */
const readModels = () => {
  const waits: { position: LogPosition; awaited: AwaitedProjections | undefined; settle: (error?: unknown) => void }[] = [];
  const readYourWrites: ReadYourWrites = {
    waitFor: (position, awaited) => new Promise<void>((resolve, reject) => void waits.push({ position, awaited, settle: (error) => (error ? reject(error) : resolve()) })),
  };
  return { readYourWrites, waits };
};

const answerOf = (answered: Promise<unknown>) =>
  answered.then(
    () => 'ok',
    (error: unknown) => (error instanceof DomainError ? `${error.code}: ${error.description}` : `unexpected: ${String(error)}`),
  );

describe('answerOnceProjected', () => {
  it('commands that wait for the same projections share one wait, and are answered once it ends', async () => {
    const { readYourWrites, waits } = readModels();
    const a = decidedCommand(['MessageSent'], ['messages_v1']);
    const b = decidedCommand(['MessageSent'], ['messages_v1']);
    const c = decidedCommand(['UserCreated', 'UserUpdated', 'UserCreated']);
    answerOnceProjected(readYourWrites, [a.decided, b.decided, c.decided], '7');
    expect(waits.map((w) => [w.position, w.awaited])).toEqual([
      ['7', ['messages_v1']],
      // Named none: those folding what it appended.
      ['7', { folding: ['UserCreated', 'UserUpdated'] }],
    ]);
    let answered = false;
    void a.answered.then(() => (answered = true));
    await Promise.resolve();
    expect(answered).toBe(false);
    for (const wait of waits) wait.settle();
    expect(await a.answered).toEqual({ state: { decided: ['MessageSent'] }, events: [{ type: 'MessageSent', data: {} }], position: '7' });
    expect(await answerOf(b.answered)).toBe('ok');
    expect(await answerOf(c.answered)).toBe('ok');
  });

  it('a command that appended nothing, or named no projection, waits for nothing; one that appended nothing has no position', async () => {
    const { readYourWrites, waits } = readModels();
    const unchanged = decidedCommand([]);
    const internal = decidedCommand(['MessageIdsReserved'], []);
    answerOnceProjected(readYourWrites, [unchanged.decided, internal.decided], '9');
    expect(waits).toEqual([]);
    expect((await unchanged.answered).position).toBeNull();
    expect((await internal.answered).position).toBe('9');
  });

  it('whatever fails after the append, the answer says the change is saved', async () => {
    const { readYourWrites, waits } = readModels();
    const lagging = decidedCommand(['MessageSent'], ['messages_v1']);
    const broken = decidedCommand(['UserCreated']);
    answerOnceProjected(readYourWrites, [lagging.decided, broken.decided], '3');
    waits[0].settle(projectionLagError(5000));
    waits[1].settle(new Error('read models unreachable'));
    expect(await answerOf(lagging.answered)).toBe(
      'unavailable/projection_lag: The change was saved, but the read models did not reflect it within 5000 ms; retry the read shortly',
    );
    expect(await answerOf(broken.answered)).toBe(
      'unavailable/projection_lag: The change was saved, but whether the read models reflect it could not be checked; do not send it again, read it back shortly',
    );
  });
});
