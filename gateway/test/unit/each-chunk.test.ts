import { PassThrough, Readable } from "node:stream";
import { eachChunk } from "../../src/relay/each-chunk";

const chunks = (n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`chunk ${i}\n`));

// The SSE relay reads its upstream with eachChunk instead of for-await: it must end the same ways.
describe("eachChunk", () => {
  it("hands every byte over in order and resolves at the stream's end", async () => {
    const seen: Buffer[] = [];
    await eachChunk(Readable.from(chunks(5), { objectMode: false }), (c) => void seen.push(c));
    expect(Buffer.concat(seen).toString()).toBe(chunks(5).join(""));
  });

  it("what arrived while the handler was busy comes in one piece (one write for the client)", async () => {
    const body = new PassThrough();
    const seen: string[] = [];
    const done = eachChunk(body, (c) => void seen.push(c.toString()));
    body.write("a");
    body.write("b");
    body.end("c");
    await done;
    expect(seen).toEqual(["abc"]);
  });

  it('"stop" resolves at once and lets the stream go (destroyed, as leaving a for-await loop does)', async () => {
    const body = Readable.from(chunks(5), { objectMode: false });
    let seen = 0;
    await eachChunk(body, () => (++seen === 1 ? "stop" : undefined));
    expect(seen).toBe(1);
    expect(body.destroyed).toBe(true);
  });

  it("waits on a returned promise before the next chunk (the stream is paused meanwhile)", async () => {
    const body = new PassThrough();
    const order: string[] = [];
    let release!: () => void;
    const done = eachChunk(body, (c) => {
      order.push(c.toString());
      if (c.toString() === "a") return new Promise<void>((r) => (release = () => (order.push("released"), r())));
    });
    body.write("a");
    await new Promise((r) => setImmediate(r));
    body.write("b");
    body.end();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(["a"]);
    release();
    await done;
    expect(order).toEqual(["a", "released", "b"]);
  });

  it("rejects with the stream's error, on a close before the end, and with what the handler threw", async () => {
    const failing = new PassThrough();
    const a = eachChunk(failing, () => undefined);
    failing.destroy(Object.assign(new Error("socket reset"), { code: "UND_ERR_SOCKET" }));
    await expect(a).rejects.toMatchObject({ code: "UND_ERR_SOCKET" });

    const cut = new PassThrough();
    const b = eachChunk(cut, () => undefined);
    cut.write("x");
    cut.destroy();
    await expect(b).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });

    const thrown = new PassThrough();
    const c = eachChunk(thrown, () => {
      throw new Error("bad event");
    });
    thrown.write("x");
    await expect(c).rejects.toThrow("bad event");
    expect(thrown.destroyed).toBe(true);
  });

  it("a rejected wait ends it with that error", async () => {
    const body = new PassThrough();
    const done = eachChunk(body, () => Promise.reject(new Error("client stalled")));
    body.write("x");
    await expect(done).rejects.toThrow("client stalled");
    expect(body.destroyed).toBe(true);
  });
});
