import { LogPosition, positionAfter } from '../../domain/event';
import { checkpointName, physicalCollection, ProjectionDefinition } from '../../../../projections/projection';

/**
 * The versions that build beside a serving one apart from the others, as the stored checkpoints
 * say at start (`building`: newer than the version serving, not yet caught up with it). Each
 * group folds with a subscription of its own: a version folding the log from its start never
 * holds up the serving one, which keeps following new events (and the writes waiting for them).
 * With no version building (a single version of everything, a fresh store, a switch already
 * made) every definition is `current`.
 */
export function buildingApart(
  definitions: readonly ProjectionDefinition[],
  stored: ReadonlyMap<string, LogPosition>,
): { readonly current: ProjectionDefinition[]; readonly building: ProjectionDefinition[] } {
  const versions = new ProjectionVersions(definitions, (checkpoint) => stored.get(checkpoint) ?? null);
  const current: ProjectionDefinition[] = [];
  const building: ProjectionDefinition[] = [];
  for (const definition of definitions) {
    (definition.version > versions.active(definition.name).version ? building : current).push(definition);
  }
  return { current, building };
}

/**
 * Which version of each projection serves reads. A projection may be listed in several
 * versions at once (the old one kept while a bumped one builds, see docs/architecture.md
 * "Versioned projections"): the oldest serves until a newer one has folded at least as far,
 * then reads switch to the newer one for good. A fresh store (nothing folded anywhere) serves
 * the newest.
 */
export class ProjectionVersions {
  private readonly byName = new Map<string, ProjectionDefinition[]>();
  private readonly servingVersion = new Map<string, ProjectionDefinition>();
  private readonly ownerOfCollection = new Map<string, string>();
  /** Every checkpoint name of every listed version. */
  readonly checkpoints: readonly string[];
  /** True while no projection is listed in more than one version: then nothing ever switches. */
  private readonly singleVersions: boolean;
  private readonly physicalOf = new Map<string, string>();
  /** Projection names by an event type they fold (found once per type). */
  private readonly foldingType = new Map<string, string[]>();

  constructor(
    definitions: readonly ProjectionDefinition[],
    private readonly positionOf: (checkpoint: string) => LogPosition | null,
  ) {
    for (const definition of definitions) {
      const versions = this.byName.get(definition.name) ?? [];
      versions.push(definition);
      versions.sort((a, b) => a.version - b.version);
      this.byName.set(definition.name, versions);
      for (const collection of definition.collections) this.ownerOfCollection.set(collection.name, definition.name);
    }
    this.checkpoints = definitions.map(checkpointName);
    this.singleVersions = [...this.byName.values()].every((versions) => versions.length === 1);
    if (this.singleVersions) {
      for (const definition of definitions) {
        for (const c of definition.collections) this.physicalOf.set(c.name, physicalCollection(c.name, definition.version));
      }
    }
  }

  /** The serving checkpoints for the ones a caller names (all when none are named), without repeats. */
  servingCheckpoints(requested?: readonly string[]): readonly string[] {
    if (this.singleVersions) return requested ?? this.checkpoints;
    return [...new Set((requested ?? this.activeCheckpoints()).map((name) => this.activeCheckpoint(name)))];
  }

  /**
   * The serving checkpoints of the projections that fold any of these event types (the read
   * models a write of them changes), except those whose readers wait for them themselves; but a
   * projection folded in the background is waited for by the writes that remove content from it
   * (a message's delete or edit: its words leave search.sqlite before the delete is answered).
   */
  foldingCheckpoints(types: readonly string[]): readonly string[] {
    const names = new Set<string>();
    for (const type of types) {
      let folding = this.foldingType.get(type);
      if (!folding) {
        folding = [...this.byName.values()].filter((versions) => versions.some((d) => d.handles.includes(type) && (!d.awaitedByReaders || (d.background && d.destroys?.includes(type))))).map((versions) => versions[0].name);
        this.foldingType.set(type, folding);
      }
      for (const name of folding) names.add(name);
    }
    return [...names].map((name) => checkpointName(this.active(name)));
  }

  /** The definition serving reads of a projection now. */
  active(name: string): ProjectionDefinition {
    const versions = this.byName.get(name);
    if (!versions) throw new Error(`Unknown projection ${name}`);
    let current = this.servingVersion.get(name) ?? versions[0];
    for (const newer of versions) {
      if (newer.version > current.version && this.hasReached(newer, current)) current = newer;
    }
    this.servingVersion.set(name, current);
    return current;
  }

  /** The serving checkpoint for a checkpoint name of any version of the same projection. */
  activeCheckpoint(checkpoint: string): string {
    const name = checkpoint.replace(/_v\d+$/, '');
    return this.byName.has(name) ? checkpointName(this.active(name)) : checkpoint;
  }

  /** Every serving checkpoint: what "all projections" means for read-your-writes and readiness. */
  activeCheckpoints(): string[] {
    return [...this.byName.keys()].map((name) => checkpointName(this.active(name)));
  }

  /** Where reads find a projection's collection now. */
  collection(logical: string): string {
    if (this.singleVersions) return this.physicalOf.get(logical) ?? logical;
    const owner = this.ownerOfCollection.get(logical);
    return owner ? physicalCollection(logical, this.active(owner).version) : logical;
  }

  /** `building` for a newer version still catching up, `retired` for an older one no longer read. */
  role(checkpoint: string): 'serving' | 'building' | 'retired' {
    const active = this.activeCheckpoint(checkpoint);
    if (active === checkpoint) return 'serving';
    const version = (c: string) => Number(/_v(\d+)$/.exec(c)?.[1] ?? 0);
    return version(checkpoint) > version(active) ? 'building' : 'retired';
  }

  private hasReached(newer: ProjectionDefinition, older: ProjectionDefinition): boolean {
    const olderAt = this.positionOf(checkpointName(older));
    const newerAt = this.positionOf(checkpointName(newer));
    if (olderAt === null) return true; // the older one has nothing to offer either
    return newerAt !== null && !positionAfter(olderAt, newerAt);
  }
}
