import { indexedText, phraseRanges, queryPhrases, searchFacets, wordsOf } from './search-text';

describe('search text', () => {
  it('folds case and diacritics, and splits words at anything that is not a letter or digit', () => {
    expect(indexedText('Le CAFÉ, naïve Ångström: e-mail_42!')).toBe('le cafe naive angstrom e mail 42');
    expect(indexedText('ＦＵＬＬ width ①')).toBe('full width 1');
  });

  it('makes each Han, Kana and Hangul character a word of its own, keeping the words around them', () => {
    expect(indexedText('東京タワーに行きました')).toBe('東 京 タ ワ ー に 行 き ま し た');
    expect(indexedText('mixed東京and café')).toBe('mixed 東 京 and cafe');
    expect(indexedText('서울에서')).toBe('서 울 에 서');
  });

  it('says where each word stands in the text as given (UTF-16 offsets), combining marks and astral characters included', () => {
    expect(wordsOf('Cafe\u0301 ok')).toEqual([
      { word: 'cafe', start: 0, end: 5 },
      { word: 'ok', start: 6, end: 8 },
    ]);
    expect(wordsOf('😀 𝐀b')).toEqual([{ word: 'ab', start: 3, end: 6 }]);
  });

  it('parses a query into phrases: quoted words, and each other part between spaces', () => {
    expect(queryPhrases('Café  "quick BROWN fox" e-mail 東京')).toEqual([['cafe'], ['quick', 'brown', 'fox'], ['e', 'mail'], ['東', '京']]);
    expect(queryPhrases('hello hello HELLO')).toEqual([['hello']]);
    expect(queryPhrases(' ?! "" ')).toEqual([]);
  });

  it('finds the phrases in a text and merges ranges that overlap', () => {
    const text = 'The quick brown fox, the QUICK fox';
    expect(phraseRanges(text, [['quick', 'brown'], ['brown', 'fox'], ['quick']])).toEqual([
      { start: 4, end: 19 },
      { start: 25, end: 30 },
    ]);
    expect(phraseRanges('今日は東京で会議', [['東', '京']])).toEqual([{ start: 3, end: 5 }]);
    expect(phraseRanges('nothing here', [['absent']])).toEqual([]);
  });

  it('writes each facet as one token of letters and digits, kinds apart', () => {
    const room = searchFacets.room('acme', 'r 1/é');
    expect(room).toMatch(/^r[0-9a-f]+$/);
    expect(searchFacets.sender('acme', 'r 1/é')).not.toBe(room);
    expect(searchFacets.room('acme', 'x')).not.toBe(searchFacets.room('acm', 'ex'));
  });
});
