/**
 * `deno task admin <command>`: the platform admin API from a terminal. Prints the response's
 * `data` as JSON; on an error prints the error envelope to stderr and exits 1.
 *
 * The admin URL comes from ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT), the token from
 * PLATFORM_ADMIN_TOKEN or the one `deno task start` generated into DATA_DIR.
 */
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { ALL_SCOPES } from "@printshop/shared/scopes";

const USAGE = `Usage: deno task admin <command> [options]

  create-org --name <name>
  list-orgs
  create-key --org <orgId> (--scopes <a,b,…> | --all-scopes) [--name <name>]
  list-keys --org <orgId>
  revoke-key --key <keyId>            (or: revoke-key <keyId>)
  set-limits --org <orgId> --rpm <requests per minute | default>
  create-partner-app --name <name> (--scopes <a,b,…> | --all-scopes)
  grant --app <appId> --org <orgId> (--scopes <a,b,…> | --all-scopes)
`;

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    name: { type: "string" },
    org: { type: "string" },
    key: { type: "string" },
    scopes: { type: "string" },
    "all-scopes": { type: "boolean" },
    rpm: { type: "string" },
    app: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

function fail(message: string): never {
  console.error(message);
  Deno.exit(2);
}

function need(value: string | undefined, flag: string): string {
  if (!value) fail(`Missing --${flag}\n\n${USAGE}`);
  return value;
}

async function adminToken(): Promise<string> {
  const fromEnv = Deno.env.get("PLATFORM_ADMIN_TOKEN");
  if (fromEnv) return fromEnv;
  const file = join(resolve(Deno.env.get("DATA_DIR") || "./.data"), "secrets.json");
  try {
    return (JSON.parse(await Deno.readTextFile(file)) as { adminToken: string }).adminToken;
  } catch {
    fail(`No PLATFORM_ADMIN_TOKEN set and no ${file}; start the platform first`);
  }
}

function scopesArg(): string[] {
  if (values["all-scopes"]) return [...ALL_SCOPES];
  return need(values.scopes, "scopes").split(",").map((s) => s.trim()).filter(Boolean);
}

const [command, ...rest] = positionals;
if (values.help || !command) {
  console.log(USAGE);
  Deno.exit(command ? 0 : 2);
}

let request: { method: string; path: string; body?: unknown };
switch (command) {
  case "create-org":
    request = {
      method: "POST",
      path: "/admin/organizations",
      body: { name: need(values.name, "name") },
    };
    break;
  case "list-orgs":
    request = { method: "GET", path: "/admin/organizations" };
    break;
  case "create-key": {
    const scopes = scopesArg();
    request = {
      method: "POST",
      path: `/admin/organizations/${need(values.org, "org")}/api-keys`,
      body: values.name ? { name: values.name, scopes } : { scopes },
    };
    break;
  }
  case "list-keys":
    request = { method: "GET", path: `/admin/organizations/${need(values.org, "org")}/api-keys` };
    break;
  case "revoke-key":
    request = { method: "DELETE", path: `/admin/api-keys/${need(values.key ?? rest[0], "key")}` };
    break;
  case "set-limits": {
    const rpm = need(values.rpm, "rpm");
    request = {
      method: "PUT",
      path: `/admin/organizations/${need(values.org, "org")}/limits`,
      body: { requestsPerMinute: rpm === "default" ? null : Number(rpm) },
    };
    break;
  }
  case "create-partner-app":
    request = {
      method: "POST",
      path: "/admin/partner-apps",
      body: { name: need(values.name, "name"), scopes: scopesArg() },
    };
    break;
  case "grant":
    request = {
      method: "POST",
      path: `/admin/partner-apps/${need(values.app, "app")}/grants`,
      body: { organizationId: need(values.org, "org"), scopes: scopesArg() },
    };
    break;
  default:
    fail(`Unknown command "${command}"\n\n${USAGE}`);
}

const base = Deno.env.get("ADMIN_URL") ||
  `http://127.0.0.1:${Deno.env.get("ADMIN_PORT") || "8081"}`;
let res: Response;
try {
  res = await fetch(`${base}${request.path}`, {
    method: request.method,
    headers: {
      authorization: `Bearer ${await adminToken()}`,
      "content-type": "application/json",
    },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
} catch {
  fail(`Cannot reach the admin API at ${base}; is the platform running?`);
}
const json = await res.json() as { data?: unknown };
if (!res.ok) {
  console.error(JSON.stringify(json, null, 2));
  Deno.exit(1);
}
console.log(JSON.stringify(json.data, null, 2));
