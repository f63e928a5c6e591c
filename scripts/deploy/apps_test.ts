import assert from "node:assert/strict";
import type { z } from "zod";
import { type AppName, APPS, consumersOf, deploySettings, variablesFromReadme } from "./apps.ts";
import { ConfigSchema as gateway } from "../../gateway/config.ts";
import { ConfigSchema as quotes } from "../../services/quotes/config.ts";
import { ConfigSchema as catalogue } from "../../services/catalogue/config.ts";
import { ConfigSchema as crm } from "../../services/crm/config.ts";
import { ConfigSchema as proofs } from "../../services/proofs/config.ts";
import { ConfigSchema as webhooks } from "../../services/webhooks/config.ts";

const SCHEMAS: Record<AppName, z.ZodObject> = { gateway, quotes, catalogue, crm, proofs, webhooks };
/** What the platform gives an instance itself, not the operator. */
const PLATFORM_PROVIDED = new Set(["PORT"]);

const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));

Deno.test("the README's Deno Deploy table names, per app, variables that app reads and every one it needs", () => {
  const variables = variablesFromReadme(readme);
  for (const app of APPS) {
    const shape = SCHEMAS[app].shape as Record<string, z.ZodType>;
    for (const name of variables[app]) {
      assert.ok(name in shape, `README lists ${name} for ${app}, which does not read it`);
    }
    for (const [name, field] of Object.entries(shape)) {
      if (PLATFORM_PROVIDED.has(name) || field.safeParse(undefined).success) continue;
      assert.ok(variables[app].includes(name), `${app} needs ${name}; the README does not list it`);
    }
  }
  // On Deploy the gateway has no second port and links must name its public address.
  assert.ok(variables.gateway.includes("PUBLIC_URL"));
});

Deno.test("variablesFromReadme() reads ticks per column and refuses a README without the table", () => {
  const table = [
    "## Deno Deploy",
    "",
    "| Variable | gateway | quotes | catalogue | crm | proofs | webhooks | Value |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    "| `A_URL` | ✓ | | | | | ✓ | x |",
    "| `B` | | ✓ | | | | | y |",
    "",
    "## Next",
  ].join("\n");
  const parsed = variablesFromReadme(`intro\n${table}\n`);
  assert.deepEqual(parsed.gateway, ["A_URL"]);
  assert.deepEqual(parsed.webhooks, ["A_URL"]);
  assert.deepEqual(parsed.quotes, ["B"]);
  assert.deepEqual(parsed.crm, []);
  assert.throws(() => variablesFromReadme("## Compose\n"), /Deno Deploy/);
});

Deno.test("each app's deno.json carries its deploy settings: install, migrations before deploy, deploy.ts", async () => {
  for (const app of APPS) {
    const settings = await deploySettings(app);
    assert.equal(settings.entrypoint, "./deploy.ts", app);
    assert.ok(settings.predeploy.endsWith(`scripts/migrate.ts ${app}`), settings.predeploy);
    await Deno.stat(`${settings.dir}${settings.entrypoint}`);
  }
});

Deno.test("a relay kicks the apps that consume its topic: webhooks everything, quotes the CRM's", () => {
  assert.deepEqual(consumersOf("crm"), ["webhooks", "quotes"]);
  assert.deepEqual(consumersOf("quotes"), ["webhooks"]);
  assert.deepEqual(consumersOf("gateway"), ["webhooks"]);
  assert.deepEqual(consumersOf("webhooks"), []);
});
