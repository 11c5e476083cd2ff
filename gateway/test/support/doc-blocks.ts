import { spawn, type SpawnOptions } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The fenced code blocks of a docs/ page, so tests can run or check each one. A block is named by an HTML
 * comment on the line before its opening fence: `<!-- test: curl-chat -->`. Fences may be indented (inside a
 * list item); the indentation is removed from the block's text.
 */

export const REPO_ROOT = join(__dirname, "..", "..", "..");

export interface DocBlock {
  /** The name from `<!-- test: NAME -->`, or undefined for an unmarked block. */
  name?: string;
  /** The fence's info string: bash, js, yaml, text, json… */
  lang: string;
  text: string;
  /** 1-based line of the opening fence, for messages. */
  line: number;
}

const FENCE = /^(\s*)```(\S*)\s*$/;
const MARKER = /^\s*<!--\s*test:\s*([a-z0-9-]+)\s*-->\s*$/;

export function readDoc(page: string): string {
  return readFileSync(join(REPO_ROOT, "docs", page), "utf8");
}

export function docBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(Math.min(indent, lines[j]!.search(/\S|$/))));
    if (j === lines.length) throw new Error(`unclosed code fence at line ${i + 1}`);
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === "") k--;
    const marker = k >= 0 ? MARKER.exec(lines[k]!) : null;
    blocks.push({ name: marker?.[1], lang: open[2]!, text: body.join("\n") + "\n", line: i + 1 });
    i = j;
  }
  return blocks;
}

/** The named blocks of a page; fails on a duplicate name. */
export function namedBlocks(markdown: string): Map<string, DocBlock> {
  const out = new Map<string, DocBlock>();
  for (const b of docBlocks(markdown)) {
    if (!b.name) continue;
    if (out.has(b.name)) throw new Error(`two blocks are named "${b.name}" (line ${b.line})`);
    out.set(b.name, b);
  }
  return out;
}

/** The text of a `## heading` section, up to the next `## ` heading. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

/** The Markdown tables in `text`, each as its rows, header -> cell; an escaped pipe (`\|`) inside a cell is part of its text. */
export function tables(text: string): Record<string, string>[][] {
  const cells = (l: string) =>
    l
      .trim()
      .replace(/^\||(?<!\\)\|$/g, "")
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, "|"));
  const out: Record<string, string>[][] = [];
  let run: string[] = [];
  for (const line of [...withoutFences(text).split("\n"), ""]) {
    if (line.trim().startsWith("|")) {
      run.push(line);
      continue;
    }
    if (run.length >= 2) {
      const names = cells(run[0]!);
      out.push(run.slice(2).map((r) => Object.fromEntries(cells(r).map((c, i) => [names[i] ?? String(i), c]))));
    }
    run = [];
  }
  return out;
}

/** The rows of the table whose header has a column `column`. */
export function tableWith(text: string, column: string): Record<string, string>[] {
  const t = tables(text).find((rows) => rows[0] && column in rows[0]);
  if (!t) throw new Error(`no table with a "${column}" column`);
  return t;
}

/** Markdown without its fenced code blocks. */
export function withoutFences(text: string): string {
  return text.replace(/^\s*```[^\n]*\n[\s\S]*?^\s*```\s*$/gm, "");
}

/** `code` spans of a piece of Markdown (outside fenced blocks). */
export function codeSpans(text: string): string[] {
  return [...withoutFences(text).matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (or its timeout, then SIGKILL) and collects its output. */
export function run(cmd: string, args: string[], opts: SpawnOptions & { timeoutMs?: number } = {}): Promise<RunResult> {
  const { timeoutMs = 60_000, ...spawnOpts } = opts;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, ...spawnOpts, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
