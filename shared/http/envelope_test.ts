import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { envelopeBytes, envelopeText } from "./envelope.ts";

const encoder = new TextEncoder();

Deno.test("envelopeBytes writes the bytes envelopeText's text encodes to, data as given", () => {
  const cases: [string, string | undefined, boolean | undefined][] = [
    [`{"quoteRef":"Q-00001","clientName":"Café Ümlaut 🧵"}`, undefined, undefined],
    ["[]", "Quote created", true],
    ["null", 'A "quoted" message\n', false],
  ];
  for (const [data, message, status] of cases) {
    const bytes = envelopeBytes(encoder.encode(data), message, status);
    assertEquals(bytes, encoder.encode(envelopeText(data, message, status)));
    assertEquals(JSON.parse(new TextDecoder().decode(bytes)).data, JSON.parse(data));
  }
});
