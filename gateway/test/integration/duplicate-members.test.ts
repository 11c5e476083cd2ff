import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { generateApiKey, hashApiKey } from "../../src/auth/api-keys";
import { startHarness, type Harness } from "../support/harness";

/**
 * A body repeating a member the gateway acts on (`model`, `stream`, `stream_options`): the gateway decides on
 * JSON.parse's value (the last), so the model server must receive only that one, whichever copy its own parser
 * would keep. Otherwise a key allowed one model could reach another by naming it first.
 */
describe("repeated top-level members", () => {
  let h: Harness;
  let upstream: Server;
  const received: string[] = [];
  const narrow = generateApiKey();

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
        received.push(Buffer.concat(chunks).toString("utf8"));
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 1, model: "open", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
      });
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    h = await startHarness([{ id: "other" }], {
      extraKeys: [{ name: "narrow", sha256: hashApiKey(narrow), models: ["open"] }],
      mapCatalog: (c) => ({ models: [...c.models, { id: "open", category: "generative", upstream: { mode: "pool", url } }] }),
    });
  });
  afterAll(async () => {
    await h.close();
    upstream.close();
  });

  const post = (body: string) =>
    fetch(`${h.gateway.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${narrow}`, "content-type": "application/json" }, body });

  it("`model` named twice: the upstream gets only the one the key was checked against", async () => {
    const res = await post('{"model":"secret","messages":[{"role":"user","content":"hi"}],"mod\\u0065l":"open"}');
    expect(res.status).toBe(200);
    const sent = received.at(-1)!;
    expect(sent.match(/"model"|"mod\\u0065l"/g)).toEqual(['"model"']);
    expect(JSON.parse(sent)).toMatchObject({ model: "open", messages: [{ role: "user", content: "hi" }] });
  });

  it("`stream` named twice: the upstream gets the value the gateway relays for", async () => {
    const res = await post('{"model":"open","stream":true,"messages":[{"role":"user","content":"hi"}],"stream":false}');
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const sent = received.at(-1)!;
    expect(sent.match(/"stream"/g)).toEqual(['"stream"']);
    expect(JSON.parse(sent).stream).toBe(false);
  });

  it("a body without repeats goes upstream byte for byte", async () => {
    const body = '{"model":"open", "messages":[{"role":"user","content":"hi"}],"x_big":123456789012345678901234567890}';
    expect((await post(body)).status).toBe(200);
    expect(received.at(-1)).toBe(body);
  });
});
