// Generated sections inside hand-written pages: the text between `<!-- <name>:start -->` and `<!-- <name>:end -->`
// is written by a script, the rest of the page by hand; the page's test compares the section with the script's output.

/** `text` with the section `name` replaced by `body`; throws when the page has no such section. */
export function replaceSection(text: string, name: string, body: string): string {
  const re = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
  if (!re.test(text)) throw new Error(`no section "${name}" (<!-- ${name}:start --> … <!-- ${name}:end -->)`);
  return text.replace(re, (_m, start: string, end: string) => `${start}${body}\n${end}`);
}
