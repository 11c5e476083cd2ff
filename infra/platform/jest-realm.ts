// jest runs each suite in a vm context, but Node's structuredClone builds its copy in the main context: the copy's
// arrays fail `instanceof Array` in the suite, and Pulumi's serializer (runtime/rpc.js tests `instanceof Array`) then
// sends them to the mock engine as objects ({"0": …}), so recorded chart values lose their lists. Outside jest there is
// one context and nothing to fix; here every clone is rebuilt from the suite's own Array and Object.
const outerClone = globalThis.structuredClone;

function local(v: unknown): unknown {
  if (Array.isArray(v)) return Array.from(v, local);
  if (v !== null && typeof v === "object" && Object.prototype.toString.call(v) === "[object Object]") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, local(x)]));
  }
  return v;
}

globalThis.structuredClone = ((value: unknown, options?: Parameters<typeof structuredClone>[1]) => local(outerClone(value, options))) as typeof structuredClone;
