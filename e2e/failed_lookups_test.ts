/**
 * Guessing costs the guesser, never a genuine client, through the real edge: clients on several
 * loopback addresses (any 127.x.y.z is this machine; `node:net` binds the client's side, which
 * Deno.connect cannot), as a proxy's customers, an office or an attacker would reach it.
 *
 * Failed credentials are limited per address, and a key seen valid is still served there; forged
 * approval tokens are limited per address, and a genuine link still opens there; a genuine link
 * is limited per link instead, views and decisions apart.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Buffer } from "node:buffer";
import net from "node:net";
import { approvalPages } from "@printshop/shared/contracts/proofs";
import { sleep } from "@printshop/shared/net";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { AUTH_CACHE_TTL_MS } from "../gateway/auth.ts";
import { generateApiKey } from "../gateway/domain/api_key.ts";
import { FAILED_LOOKUP_POLICY } from "../gateway/domain/failed_lookups.ts";

type Json = Record<string, unknown>;

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** What an address may fail before it is refused. */
const BURST = FAILED_LOOKUP_POLICY.requestsPerMinute;
const PAGE = approvalPages.approvalPage;

/** The body of an HTTP/1.1 answer, chunked or not. */
function bodyOf(headers: Headers, raw: Buffer): string {
  if (headers.get("transfer-encoding")?.toLowerCase() !== "chunked") return raw.toString("utf8");
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at);
    const size = parseInt(raw.subarray(at, lineEnd).toString("latin1"), 16);
    if (!(size > 0)) break;
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts).toString("utf8");
}

/** One request from the client address `from` to the gateway at `url`, on a connection of its own. */
function requestFrom(
  url: string,
  from: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = "",
): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const head = [
    `${method} ${path} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    "connection: close",
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join("\r\n");
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: hostname, port: Number(port), localAddress: from });
    socket.on("connect", () => socket.write(`${head}\r\n\r\n${body}`));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf("\r\n\r\n");
      if (end === -1) return reject(new Error(`no answer from ${from}: ${all.toString()}`));
      const [statusLine, ...fields] = all.subarray(0, end).toString("latin1").split("\r\n");
      const answerHeaders = new Headers();
      for (const field of fields) {
        const colon = field.indexOf(":");
        answerHeaders.append(field.slice(0, colon).trim(), field.slice(colon + 1).trim());
      }
      resolve({
        status: Number(statusLine!.split(" ")[1]),
        headers: answerHeaders,
        body: bodyOf(answerHeaders, all.subarray(end + 4)),
      });
    });
  });
}

/** A token shaped like a link's, signed by nobody. */
const forgedToken = (): string =>
  Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");

Deno.test("guessing through the edge costs the guesser's address, never a genuine client", async (t) => {
  await using stack: TestStack = await startTestStack();
  const shop = await stack.tenant(undefined, "Guarded Print Shop");
  const send = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await stack.call(shop.apiKey, method, path, body);
    const json = await res.json() as Json;
    assert(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data as Json;
  };
  const me = (from: string, key: string): Promise<Answer> =>
    requestFrom(stack.gatewayUrl, from, "GET", "/v1/me", { "x-api-key": key });

  await t.step(
    `${BURST} unknown keys from one address, then 429; a key seen valid there still works`,
    async () => {
      const guesser = "127.0.0.2";
      assertEquals((await me(guesser, shop.apiKey)).status, 200, "the shop's key, seen valid");
      for (let i = 0; i < BURST; i++) {
        const answer = await me(guesser, generateApiKey().token);
        assertEquals(answer.status, 401, `guess ${i + 1}: ${answer.body}`);
      }
      const refused = await me(guesser, generateApiKey().token);
      assertEquals(refused.status, 429, refused.body);
      const retryAfter = Number(refused.headers.get("retry-after"));
      assert(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${retryAfter}`);
      const envelope = JSON.parse(refused.body) as { error: string; message: string };
      assertEquals(envelope.error, "rate_limited");
      assert(envelope.message.includes("failed credentials from this address"), envelope.message);

      // Past the principal cache, so the key is looked up again from the limited address.
      await sleep(AUTH_CACHE_TTL_MS + 100);
      assertEquals((await me(guesser, shop.apiKey)).status, 200, "the shop's key still works");

      // Elsewhere, a guess is a 401 and a key never used before is accepted.
      const other = await stack.tenant(undefined, "Neighbouring Print Shop");
      assertEquals((await me("127.0.0.3", generateApiKey().token)).status, 401);
      assertEquals((await me("127.0.0.3", other.apiKey)).status, 200);
    },
  );

  // A proof sent to its customer: the genuine links of the page tests.
  const quote = await send("POST", "/v1/quotes", { reference: "Guarded tees" });
  const newLink = async (): Promise<string> => {
    const proof = await send("POST", "/v1/proofs", {
      quoteId: quote.id,
      title: "Staff tees",
      recipientName: "Sam Nguyen",
      recipientEmail: "sam@riversidebakery.com.au",
      imageUrls: ["https://files.example.com/front.png"],
    });
    const sent = await send("POST", `/v1/proofs/${proof.id}/send`, {});
    const url = (sent.links as Json[])[0]!.url as string;
    return new URL(url).pathname;
  };
  const page = (from: string, path: string): Promise<Answer> =>
    requestFrom(stack.gatewayUrl, from, "GET", path);

  await t.step("70 forged tokens from one address, and its genuine link still opens", async () => {
    const link = await newLink();
    const guesser = "127.0.0.4";
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 70; i++) {
      statuses.push((await page(guesser, `/approve/${forgedToken()}`)).status);
    }
    // The bucket refills while the loop runs (one guess every 2 s): on a slow machine a guess or
    // two past the burst is answered again, as the policy allows, and no more.
    const refilled = Math.floor(
      (Date.now() - started) / 60_000 * FAILED_LOOKUP_POLICY.requestsPerMinute,
    );
    // Each forged token is the service's "not valid" page until the address has failed enough.
    assertEquals(statuses.slice(0, BURST), new Array(BURST).fill(404));
    const after = statuses.slice(BURST);
    assert(after.every((status) => status === 429 || status === 404), String(after));
    assert(
      after.filter((status) => status === 404).length <= refilled,
      `${after.filter((status) => status === 404).length} answered past the burst in ` +
        `${Date.now() - started} ms`,
    );
    const refused = await page(guesser, `/approve/${forgedToken()}`);
    assertEquals(refused.status, 429);
    assert(Number(refused.headers.get("retry-after")) >= 1, "Retry-After");

    const genuine = await page(guesser, link);
    assertEquals(genuine.status, 200, genuine.body);
    assert(genuine.body.includes("Staff tees"), "the proof's page");
    // Another address never guessed: a forged token is told it is not valid.
    assertEquals((await page("127.0.0.5", `/approve/${forgedToken()}`)).status, 404);
  });

  await t.step(
    "a genuine link opened beyond its per-link limit gets 429, from any address",
    async () => {
      const link = await newLink();
      const limit = PAGE.requestsPerMinutePerLink.GET;
      // From two addresses in turn: the limit is the link's, not an address's.
      let opened = 0;
      let refused: Answer | null = null;
      for (let i = 0; i < limit * 2 && refused === null; i++) {
        const answer = await page(i % 2 === 0 ? "127.0.0.6" : "127.0.0.7", link);
        if (answer.status === 429) refused = answer;
        else {
          assertEquals(answer.status, 200, answer.body);
          opened++;
        }
      }
      assert(refused, `refused within ${limit * 2} views (${opened} opened)`);
      // The bucket refills a view a second meanwhile: at least the minute's views, a few more.
      assert(opened >= limit && opened < limit + 15, `${opened} views before the refusal`);
      assert(Number(refused.headers.get("retry-after")) >= 1, "Retry-After");
      // Another link from the same addresses opens: nothing was held against them.
      assertEquals((await page("127.0.0.6", await newLink())).status, 200);
    },
  );

  await t.step("decisions on a link are limited apart from its views", async () => {
    const link = await newLink();
    const limit = PAGE.requestsPerMinutePerLink.POST;
    const post = (): Promise<Answer> =>
      requestFrom(stack.gatewayUrl, "127.0.0.8", "POST", link, {
        "content-type": "application/x-www-form-urlencoded",
      }, "decision=approve&signerName=Sam");
    // Without the page's form token the service refuses each post (403), but it sees them all.
    for (let i = 0; i < limit; i++) assertEquals((await post()).status, 403, `post ${i + 1}`);
    const refused = await post();
    assertEquals(refused.status, 429, refused.body);
    assert(Number(refused.headers.get("retry-after")) >= 1, "Retry-After");
    assertEquals((await page("127.0.0.8", link)).status, 200, "the link still opens");
  });
});
