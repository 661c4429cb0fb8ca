import { LayoutMigration, LayoutVersionRecord, migrateLayout } from '../../src/adapters/shared/layout-versions';

/** What every store's layout record must do, on the real server. */
export function layoutRecordContract(
  open: () => Promise<{ record: () => LayoutVersionRecord; cleanup: () => Promise<void> }>,
  migrations: readonly LayoutMigration[],
): void {
  let opened: Awaited<ReturnType<typeof open>>;
  beforeEach(async () => (opened = await open()));
  afterEach(() => opened.cleanup());

  it('records the newest version on a store with none, then only reads it', async () => {
    expect(await opened.record().read()).toBe(0);
    expect(await migrateLayout(opened.record(), migrations)).toEqual({ from: 0, to: migrations.length });
    expect(await opened.record().read()).toBe(migrations.length);
    expect(await migrateLayout(opened.record(), migrations)).toEqual({ from: migrations.length, to: migrations.length });
  });

  it('records a version only where the one it replaces is still recorded', async () => {
    expect(await opened.record().write(0, 1)).toBe(true);
    expect(await opened.record().write(0, 1)).toBe(false);
    expect(await opened.record().write(1, 2)).toBe(true);
    expect(await opened.record().write(1, 2)).toBe(false);
    expect(await opened.record().read()).toBe(2);
  });

  it('refuses a newer layout with a message naming the store and both versions', async () => {
    expect(await opened.record().write(0, migrations.length + 1)).toBe(true);
    await expect(migrateLayout(opened.record(), migrations)).rejects.toThrow(
      new RegExp(`has layout version ${migrations.length + 1}, newer than this Parley knows \\(up to version ${migrations.length}\\)`),
    );
  });

  it('processes starting together all start, and the version is recorded once', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => migrateLayout(opened.record(), migrations)));
    expect(results.map((r) => r.to)).toEqual([1, 2, 3, 4].map(() => migrations.length));
    expect(await opened.record().read()).toBe(migrations.length);
  });
}
