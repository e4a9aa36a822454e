/** Parts of at most `limit` UTF-16 units, cut at a newline or space in a part's second half (CONTRACT.md §9), never inside a surrogate pair. */
export function splitText(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1);
    let cut = window.lastIndexOf('\n');
    if (cut < limit / 2) cut = window.lastIndexOf(' ');
    let skip = 1;
    if (cut < limit / 2) {
      cut = limit;
      skip = 0;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut + skip);
  }
  parts.push(rest);
  return parts.filter((p) => p.trim() !== '');
}
