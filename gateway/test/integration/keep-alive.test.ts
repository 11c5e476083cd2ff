import type { Socket } from "node:net";
import { startHarness, waitFor, type Harness } from "../support/harness";
import { closedWithin, rawConnect, readResponse } from "../support/raw-http";

/**
 * An error answered without reading a body keeps the connection when there is no body to read: a client that
 * sent a bodyless request (GET, `Content-Length: 0`) must not pay a new connection for every 401 or 404. One
 * whose body is still to come closes it, after reading and dropping the rest (a lingering close).
 */
describe("keep-alive after early answers", () => {
  let h: Harness;
  let socket: Socket;
  beforeAll(async () => {
    h = await startHarness([{ id: "chat-model" }]);
  });
  afterAll(() => h.close());
  beforeEach(async () => {
    socket = await rawConnect(h.gateway.port);
  });
  afterEach(() => socket.destroy());

  const get = (path: string, key?: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n${key ? `Authorization: Bearer ${key}\r\n` : ""}\r\n`;

  it.each([
    ["401 on GET /v1/models without a key", get("/v1/models"), 401],
    ["404 unknown_url", "KEYED:/v1/nothing-here", 404],
    ["400 invalid_path", "KEYED:/v1/models/%E0%A4%A", 400],
    ["401 on a POST with Content-Length: 0", "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 401],
  ])("%s: the same connection serves the next request", async (_what, request, status) => {
    socket.write(request.startsWith("KEYED:") ? get(request.slice(6), h.key) : request);
    const first = await readResponse(socket);
    expect(first.status).toBe(status);
    expect(first.headers.connection).not.toBe("close");
    socket.write(get("/v1/models", h.key));
    expect((await readResponse(socket)).status).toBe(200);
    expect(await closedWithin(socket, 200)).toBe(false);
  });

  it("a refused POST whose body is still to come closes the connection instead, once the client is done", async () => {
    socket.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    const refused = await readResponse(socket);
    expect(refused.status).toBe(401);
    expect(refused.headers.connection).toBe("close");
    expect(await closedWithin(socket, 2000)).toBe(true);
  });

  it("the rest of a refused body is read to its end before the connection closes; a request after it is never handled", async () => {
    const outcome = async (name: string) => (await h.gateway.metrics.lingeringCloses.get()).values.find((v) => v.labels.outcome === name)?.value ?? 0;
    const before = await outcome("body_ended");
    // Half-open: this client goes on sending after the gateway's FIN, as one writing a large body does.
    const client = await rawConnect(h.gateway.port, undefined, { allowHalfOpen: true });
    client.write("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    const refused = await readResponse(client);
    expect(refused.status).toBe(401);
    expect(refused.headers.connection).toBe("close");
    await expect(h.gateway.metrics.lingeringConnections.get()).resolves.toMatchObject({ values: [{ value: 1 }] });
    client.end(`5\r\nworld\r\n0\r\n\r\n${get("/v1/models", h.key)}`);
    await expect(readResponse(client)).rejects.toThrow(/closed before a response/);
    await waitFor(async () => (await outcome("body_ended")) === before + 1, 5000, "the body read to its end");
  });
});
