import { facetToken } from '../../../shared/ports/read-model-store.port';

/**
 * How message search reads text, the same way when a message is indexed and when a query is
 * parsed: case and diacritics folded (`Café` is `cafe`), words are runs of letters and digits,
 * and in the scripts written without spaces between words (Han, Hiragana, Katakana, Hangul)
 * every character is a word of its own, so a query of several such characters finds them in a
 * row anywhere in a text (a phrase), as a substring search would.
 */

/** Characters that are a word each: the CJK scripts, and the Katakana prolonged sound mark. */
const OWN_WORD = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]/u;
const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * One character folded: compatibility forms decomposed, combining marks dropped, lower case,
 * composed again (a Hangul syllable stays one character, not its jamo).
 */
const fold = (char: string): string => char.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().normalize('NFC');

/** A word of a text, with where it stands in the text as given (UTF-16 offsets, `end` exclusive). */
export interface Word {
  readonly word: string;
  readonly start: number;
  readonly end: number;
}

/** Text in ASCII only, whose folding is its lower case and whose words are runs of `[a-z0-9]`. */
const ASCII = /^[\x00-\x7f]*$/;
const ASCII_WORD = /[a-z0-9]+/g;

/** The folded words of `text`, in order, each with its place in `text`. */
export function wordsOf(text: string): Word[] {
  // Most messages: the same words as character by character below, a tenth of the work.
  if (ASCII.test(text)) return [...text.toLowerCase().matchAll(ASCII_WORD)].map((m) => ({ word: m[0], start: m.index!, end: m.index! + m[0].length }));
  const words: Word[] = [];
  let current = '';
  let start = 0;
  let end = 0;
  const flush = () => {
    if (current) words.push({ word: current, start, end });
    current = '';
  };
  let offset = 0;
  for (const char of text) {
    const next = offset + char.length;
    const chars = fold(char);
    // A combining mark belongs to the word before it (`e` + U+0301 is `é`).
    if (!chars && current) end = next;
    for (const folded of chars) {
      if (OWN_WORD.test(folded)) {
        flush();
        words.push({ word: folded, start: offset, end: next });
      } else if (WORD_CHAR.test(folded)) {
        if (!current) start = offset;
        current += folded;
        end = next;
      } else {
        flush();
      }
    }
    offset = next;
  }
  flush();
  return words;
}

/** A text as the index holds it: its folded words, separated by spaces. */
export const indexedText = (text: string): string =>
  wordsOf(text)
    .map((w) => w.word)
    .join(' ');

/** The longest query, in characters, and the most phrases one may hold. */
export const QUERY_MAX_CHARACTERS = 256;
export const QUERY_MAX_PHRASES = 16;

/**
 * The phrases a query asks for, each a run of words that must stand in a row in a message: a
 * part in double quotes is one phrase, and so is each other part between spaces (`e-mail` is
 * the phrase `e mail`, `東京` the phrase `東 京`). Empty when the query holds no word.
 */
export function queryPhrases(query: string): string[][] {
  const phrases: string[][] = [];
  const pieces = query.split('"');
  pieces.forEach((piece, i) => {
    const quoted = i % 2 === 1;
    const parts = quoted ? [piece] : piece.split(/\s+/u);
    for (const part of parts) {
      const words = wordsOf(part).map((w) => w.word);
      if (words.length) phrases.push(words);
    }
  });
  const seen = new Set<string>();
  return phrases.filter((p) => {
    const key = p.join(' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A found phrase in a text: UTF-16 offsets in the text as given, `end` exclusive. */
export interface TextRange {
  readonly start: number;
  readonly end: number;
}

/** Where the phrases stand in `text` (what a search result highlights), in order, overlaps merged. */
export function phraseRanges(text: string, phrases: readonly (readonly string[])[]): TextRange[] {
  const words = wordsOf(text);
  const ranges: TextRange[] = [];
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= words.length; i++) {
      if (phrase.every((w, k) => words[i + k].word === w)) ranges.push({ start: words[i].start, end: words[i + phrase.length - 1].end });
    }
  }
  ranges.sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: TextRange[] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r.start <= last.end) merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, r.end) };
    else merged.push(r);
  }
  return merged;
}

/**
 * What a search may require of a message beside its words, as index tokens of letters and
 * digits: its instance, its room, its sender, and whether it has an attachment. Ids are
 * written in hex, so any id is one token, and the kinds cannot meet (the first letter differs).
 */
export const FACET_PREFIXES = { instance: 'i', room: 'r', sender: 'u' } as const;
export const searchFacets = {
  instance: (instanceId: string): string => facetToken(FACET_PREFIXES.instance, instanceId),
  room: (instanceId: string, roomId: string): string => facetToken(FACET_PREFIXES.room, instanceId, roomId),
  sender: (instanceId: string, userId: string): string => facetToken(FACET_PREFIXES.sender, instanceId, userId),
  attachment: 'attachment',
} as const;
