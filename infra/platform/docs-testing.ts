// Test helpers for the pages under docs/: tests beside the code a page describes read the page with these, so
// the page cannot drift from the code (every name it must mention, every example it shows validated).
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "./charts";

/** The text of `docs/<name>`. */
export function readDoc(name: string): string {
  return fs.readFileSync(path.join(REPO_ROOT, "docs", name), "utf8");
}

/** Every inline code span of a page (`like this`), as written. */
export function codeSpans(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string));
}

export interface MarkedBlock {
  /** What follows `validate:` in the `<!-- validate: … -->` comment right above the block. */
  readonly marker: string;
  /** The block's text, de-indented by its fence's indentation (blocks inside list items are indented). */
  readonly text: string;
}

/**
 * Fenced code blocks announced by an HTML comment `<!-- validate: <marker> -->` on the line before them. The comment
 * does not render, so a page shows plain examples while its tests know what each one must satisfy.
 */
export function markedBlocks(markdown: string): MarkedBlock[] {
  const lines = markdown.split("\n");
  const blocks: MarkedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^\s*<!-- validate: (\S+) -->\s*$/.exec(lines[i] as string)?.[1];
    if (!marker) continue;
    const fence = /^(\s*)```/.exec(lines[i + 1] ?? "");
    if (!fence) throw new Error(`docs: "<!-- validate: ${marker} -->" on line ${i + 1} is not followed by a fenced code block`);
    const indent = (fence[1] as string).length;
    const body: string[] = [];
    let j = i + 2;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j] as string); j++) body.push((lines[j] as string).slice(indent));
    if (j === lines.length) throw new Error(`docs: the block after "<!-- validate: ${marker} -->" on line ${i + 1} is not closed`);
    blocks.push({ marker, text: body.join("\n") });
    i = j;
  }
  return blocks;
}
