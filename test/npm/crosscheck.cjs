// Sends the same requests through the proxy with the openai npm client
// instrumented by code this project did not write, and prints what that
// instrumentation recorded, one JSON line per request:
//
//   node crosscheck.cjs otel          @opentelemetry/instrumentation-openai
//   node crosscheck.cjs openinference @arizeai/openinference-instrumentation-openai
//
// Environment: MLX_PROXY_URL (the proxy's /v1 base URL), MLX_MODEL. Each
// request carries a traceparent of its own, so the proxy's span of it is
// found in the same trace (test/e2e/npm_crosscheck_test.go compares them).
"use strict";

const crypto = require("node:crypto");
const { NodeTracerProvider } = require("@opentelemetry/sdk-trace-node");
const { InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");
const { registerInstrumentations } = require("@opentelemetry/instrumentation");

const which = process.argv[2];
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

let instrumentation;
if (which === "otel") {
  // Content is opt-in in the GenAI conventions; the comparison needs it.
  process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = "true";
  const { OpenAIInstrumentation } = require("@opentelemetry/instrumentation-openai");
  instrumentation = new OpenAIInstrumentation();
} else if (which === "openinference") {
  const { OpenAIInstrumentation } = require("@arizeai/openinference-instrumentation-openai");
  instrumentation = new OpenAIInstrumentation();
} else {
  console.error("usage: node crosscheck.cjs otel|openinference");
  process.exit(2);
}
registerInstrumentations({ instrumentations: [instrumentation], tracerProvider: provider });
// The client is required after the instrumentation is registered, so its
// require hook patches it.
const OpenAI = require("openai");
if (which === "openinference") {
  instrumentation.manuallyInstrument(OpenAI);
}

const model = process.env.MLX_MODEL;
const client = new OpenAI({ baseURL: process.env.MLX_PROXY_URL, apiKey: "none", maxRetries: 0 });

// The cases: a plain chat with parameters, a stream with its usage, an
// offered tool, a conversation with an assistant's tool call and
// "content": null, a text completion.
const tools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city.", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const cases = [
  { name: "chat", kind: "chat", body: { model, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Name a colour." }], max_tokens: 8, temperature: 0.2, top_p: 0.9 } },
  { name: "stream", kind: "chat", body: { model, messages: [{ role: "user", content: "Tell a story." }], max_tokens: 12, stream: true, stream_options: { include_usage: true } } },
  { name: "tools", kind: "chat", body: { model, messages: [{ role: "user", content: "Weather in Oslo?" }], tools, max_tokens: 16 } },
  { name: "null_content", kind: "chat", body: { model, messages: [{ role: "user", content: "Weather in Oslo?" }, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\": \"Oslo\"}" } }] }, { role: "tool", tool_call_id: "call_1", content: "4C" }], max_tokens: 8 } },
  { name: "completion", kind: "text", body: { model, prompt: "Once upon a time", max_tokens: 6 } },
];

function plain(v) {
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

async function run(c) {
  const traceId = crypto.randomBytes(16).toString("hex");
  const parentId = crypto.randomBytes(8).toString("hex");
  const options = { headers: { traceparent: `00-${traceId}-${parentId}-01` } };
  exporter.reset();
  let answer;
  if (c.kind === "text") {
    answer = await client.completions.create(c.body, options);
  } else if (c.body.stream) {
    const stream = await client.chat.completions.create(c.body, options);
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    answer = { id: chunks[0] && chunks[0].id, chunks: chunks.length, usage: chunks[chunks.length - 1].usage };
  } else {
    answer = await client.chat.completions.create(c.body, options);
  }
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    status: s.status,
    attributes: plain(s.attributes),
    events: s.events.map((e) => ({ name: e.name, attributes: plain(e.attributes || {}) })),
  }));
  return { case: c.name, instrumentation: which, traceId, answerId: answer.id, usage: answer.usage || null, spans };
}

(async () => {
  for (const c of cases) {
    process.stdout.write(JSON.stringify(await run(c)) + "\n");
  }
  await provider.shutdown();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
