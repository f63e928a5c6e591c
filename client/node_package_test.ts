/**
 * The client as a Node integrator gets it: built to JavaScript and declarations (build.ts),
 * packed with `npm pack` (as `deno task client:pack` does), installed from the tarball into an empty folder with `npm install`
 * (its dependencies come from the npm registry), type-checked as a consumer would, and run
 * with Node against a real gateway (node_smoke.mjs).
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import ts from "typescript";
import { startTestStack } from "@printshop/shared/testing";
import { BUILD_OPTIONS, buildNodePackage } from "./build.ts";

const CLIENT_DIR = new URL("./", import.meta.url).pathname;

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const output = await new Deno.Command(command, { args, cwd, env, stdin: "null" }).output();
  const decoder = new TextDecoder();
  const stdout = decoder.decode(output.stdout);
  if (!output.success) {
    throw new Error(
      `${command} ${args.join(" ")} failed (${output.code}):\n${stdout}\n` +
        decoder.decode(output.stderr),
    );
  }
  return stdout;
}

/** What a TypeScript user of the package writes; the `@ts-expect-error` lines must be errors. */
const CONSUMER = `
import { createPrintShopClient, verifyWebhook, type WebhookEventOf } from "@printshop/client";
const client = createPrintShopClient({ baseUrl: "http://localhost", apiKey: "psk_x" });
export async function use(): Promise<string[]> {
  const refs: string[] = [];
  for await (const quote of client.paginate("/v1/quotes", { query: { limit: "2" } })) {
    refs.push(quote.quoteRef);
  }
  const { data, error } = await client.GET("/v1/quotes/{quoteId}", {
    params: { path: { quoteId: "x" } },
  });
  if (error) {
    // @ts-expect-error: the 404's code is "not_found" or "route_not_found", not any string
    const wrong: "rate_limited" = error.error;
    refs.push(error.error, wrong);
  } else {
    const total: number = data.data.totalIncGst;
    refs.push(String(total));
  }
  // @ts-expect-error: no such path
  await client.GET("/v1/quotez");
  // @ts-expect-error: a quote's reference is a string or null, never a number
  await client.POST("/v1/quotes", { body: { reference: 42 } });
  const event = verifyWebhook("whsec_x", {}, "{}");
  if (event.type === "quote.created") {
    const created: WebhookEventOf<"quote.created"> = event;
    refs.push(created.data.id);
  }
  return refs;
}
`;

function typeCheck(dir: string): string[] {
  const file = `${dir}/consumer.ts`;
  Deno.writeTextFileSync(file, CONSUMER);
  const program = ts.createProgram({
    rootNames: [file],
    options: { ...BUILD_OPTIONS, noEmit: true, declaration: false, skipLibCheck: true },
  });
  return ts.getPreEmitDiagnostics(program).map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, "\n")
  );
}

Deno.test("the packed client installs with npm and works from Node", async () => {
  const scratch = await Deno.makeTempDir({ prefix: "printshop-client-node-" });
  try {
    // Built and packed in a folder of the test's own rather than in client/, so runs side by
    // side (or a `deno task client:pack` meanwhile) never share a half-written dist/.
    const staging = `${scratch}/package`;
    await buildNodePackage(`${staging}/dist`);
    for (const file of ["package.json", "README.md"]) {
      await Deno.copyFile(`${CLIENT_DIR}${file}`, `${staging}/${file}`);
    }
    const packed = JSON.parse(
      await run("npm", ["pack", "--json", "--pack-destination", scratch], staging),
    ) as { filename: string; files: { path: string }[] }[];
    const files = packed[0]!.files.map((f) => f.path);
    assert(files.includes("dist/mod.js") && files.includes("dist/mod.d.ts"), files.join(", "));
    assert(!files.some((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")), "no TypeScript sources");

    const app = `${scratch}/app`;
    await Deno.mkdir(app);
    await Deno.writeTextFile(
      `${app}/package.json`,
      JSON.stringify({ name: "smoke", private: true, type: "module" }),
    );
    await run(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        `${scratch}/${packed[0]!.filename}`,
      ],
      app,
    );

    assertEquals(typeCheck(app), [], "the installed declarations type a consumer's code");

    await using stack = await startTestStack();
    const shop = await stack.tenant();
    await Deno.copyFile(`${CLIENT_DIR}node_smoke.mjs`, `${app}/smoke.mjs`);
    const out = await run("node", ["smoke.mjs"], app, {
      GATEWAY_URL: stack.gatewayUrl,
      API_KEY: shop.apiKey,
    });
    assertEquals(JSON.parse(out.trim().split("\n").at(-1)!), {
      verifiedType: "quote.created",
      tamperedRefused: true,
      references: ["N-1", "N-2", "N-3"],
      listRequests: 2,
      quotesPaging: "offset",
    });
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
});
