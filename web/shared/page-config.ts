/**
 * The settings the server wrote into the page (`config` of registerBuiltPage in
 * src/shared/http/built-page.ts), read from `<meta name="parley-config">`.
 */
export function readPageConfig<T extends object>(): Partial<T> {
  const meta = document.querySelector('meta[name="parley-config"]');
  const content = meta?.getAttribute('content');
  if (!content) return {};
  try {
    return JSON.parse(content) as Partial<T>;
  } catch {
    return {};
  }
}
