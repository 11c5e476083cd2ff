import { ChatOpenAI, OpenAIEmbeddings } from "@langchain/openai";
import { startHarness, type Harness } from "../support/harness";

/** LangChain JS uses the gateway with only base URL and key changed. */
describe("LangChain against the gateway", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness([
      { id: "chat-model", sim: { toolCalling: true } },
      { id: "embed-model", category: "embedder", sim: { embeddingDimensions: 32 } },
    ]);
  });
  afterAll(() => h.close());

  const chat = (extra: Record<string, unknown> = {}) =>
    new ChatOpenAI({ model: "chat-model", apiKey: h.key, configuration: { baseURL: h.baseURL }, maxRetries: 0, temperature: 0, ...extra });

  it("invokes a chat model and reports token usage", async () => {
    const msg = await chat().invoke("What is a tide?");
    expect(typeof msg.content).toBe("string");
    expect((msg.content as string).length).toBeGreaterThan(0);
    expect(msg.usage_metadata?.output_tokens).toBeGreaterThan(0);
  });

  it("streams, including the usage chunk", async () => {
    let text = "";
    let outputTokens = 0;
    for await (const chunk of await chat({ streamUsage: true }).stream("Stream about the moon.")) {
      text += typeof chunk.content === "string" ? chunk.content : "";
      outputTokens += chunk.usage_metadata?.output_tokens ?? 0;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(outputTokens).toBeGreaterThan(0);
  });

  it("binds tools and receives tool calls", async () => {
    const model = chat().bindTools([
      { type: "function", function: { name: "lookup", description: "find a thing", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } } },
    ]);
    const msg = await model.invoke("Look up the tide table");
    expect(msg.tool_calls?.[0]?.name).toBe("lookup");
    expect(msg.tool_calls?.[0]?.args).toHaveProperty("q");
  });

  it("embeds queries and documents in order", async () => {
    const emb = new OpenAIEmbeddings({ model: "embed-model", apiKey: h.key, configuration: { baseURL: h.baseURL }, maxRetries: 0 });
    const q = await emb.embedQuery("harbour");
    const docs = await emb.embedDocuments(["harbour", "lighthouse", ""]);
    expect(q).toHaveLength(32);
    expect(docs).toHaveLength(3);
    docs[0]!.forEach((x, i) => expect(x).toBeCloseTo(q[i]!, 5));
    expect(docs[1]).not.toEqual(docs[0]);
  });
});
