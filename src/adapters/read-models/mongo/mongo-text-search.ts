import type { Collection, Document as MongoDocument } from 'mongodb';
import { CollectionSpec, Document, TextMatch, TextSearch } from '../../../shared/ports/read-model-store.port';
import { path, Row, toFilter } from './mongo-queries';

/**
 * Text-indexed collections (`CollectionSpec.text`) in MongoDB: a text index on the text field
 * (no language: the words come folded and split, and no word is a stop word), and an index on
 * the facets and the order for what the search filters and pages by.
 */
export function textIndexesOf(spec: CollectionSpec): { keys: Record<string, 1 | -1 | 'text'>; name: string; options: Record<string, unknown> }[] {
  if (!spec.text) return [];
  return [
    { keys: { [path(spec.text.field)]: 'text' }, name: 'tx_text', options: { default_language: 'none', language_override: 'search_language_unused' } },
    { keys: { [path(spec.text.facets)]: 1, [path(spec.text.order)]: -1 }, name: 'tx_facets_order', options: {} },
  ];
}

/** A phrase as $text reads one: quoted (every quoted phrase must occur). */
const quotedPhrase = (words: readonly string[]): string => `"${words.join(' ').replace(/"/g, ' ')}"`;

/**
 * The search as one aggregation: $text with every phrase quoted, the facet groups as `$in`s and
 * `where` in the same $match (the filter is part of the query, not applied to a page after it),
 * newest first by `order`; `relevance` takes the newest `window` matches and sorts them by the
 * text score.
 */
export async function searchTextRows<D extends Document>(rows: Collection<Row>, search: TextSearch): Promise<TextMatch<D>[]> {
  const text = search.index;
  const order = path(text.order);
  const match: MongoDocument = {
    ...toFilter({ where: search.where }),
    $text: { $search: search.phrases.map(quotedPhrase).join(' ') },
  };
  if (search.facets.length) match.$and = search.facets.map((group) => ({ [path(text.facets)]: { $in: [...group] } }));
  const relevance = search.order === 'relevance';
  const after = search.after;
  if (after && !relevance) match[order] = { $lt: after.order };
  const pipeline: MongoDocument[] = [{ $match: match }, { $sort: { [order]: -1 } }];
  if (relevance) {
    pipeline.push({ $limit: search.window }, { $addFields: { score: { $meta: 'textScore' }, ord: `$${order}` } });
    if (after) pipeline.push({ $match: { $or: [{ score: { $lt: after.score ?? 0 } }, { score: after.score ?? 0, ord: { $lt: after.order } }] } });
    pipeline.push({ $sort: { score: -1, ord: -1 } });
  } else {
    pipeline.push({ $addFields: { score: 0, ord: `$${order}` } });
  }
  pipeline.push({ $limit: search.limit });
  const found = await rows.aggregate<Row & { score: number; ord: number }>(pipeline).toArray();
  return found.map((r) => ({ document: r.doc as D, order: r.ord, score: r.score }));
}
