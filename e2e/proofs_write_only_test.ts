/**
 * Who may aim a deciding link, through the gateway: a key holding `proofs.write` but not
 * `proofs.approve` runs every operation of the proofs contract it can call, in the order that
 * could hand it a link (its own mailbox as a proof's recipient, then sends), and after each one
 * every link that reached its mailbox is opened and approved on the approval page as a customer
 * would. No proof ends `approved`, and no link reaches its mailbox. The operations are the
 * contract's: one it adds fails this test until it is covered here.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { waitFor } from "@printshop/shared/net";
import { startTestStack, type TestStack } from "@printshop/shared/testing";
import { parts, smtpServer } from "@printshop/shared/testing/smtp";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { type OutboxMail, proofsContract } from "@printshop/shared/contracts/proofs";

type Json = Record<string, unknown>;
type OperationId = keyof typeof proofsContract.operations;

const WRITERS_OWN = "writer@inkwell.example";
const CUSTOMER = "sam@riversidebakery.com.au";
const IMG = "https://files.example.com/front.png";

Deno.test("a proofs.write-only key brings no proof to approved, whatever it calls", async () => {
  await using smtp = await smtpServer();
  await using stack: TestStack = await startTestStack({
    processEnv: {
      proofs: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}?from=proofs@inkwell.example` },
    },
  });
  const shop = await stack.tenant(undefined, "Inkwell Print Co");
  const writerKey = (await stack.admin<{ data: { apiKey: string } }>(
    "POST",
    `/admin/organizations/${shop.organizationId}/api-keys`,
    { scopes: ALL_SCOPES.filter((s) => s !== "proofs.approve") },
  )).data.apiKey;

  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await stack.call(key, method, path, body);
    const text = await res.text();
    return { status: res.status, text, data: (JSON.parse(text) as { data: Json }).data };
  };
  const shopDoes = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const answer = await call(shop.apiKey, method, path, body);
    assert(answer.status < 300, `${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.data;
  };
  /** What the writer got for each operation, and every answer's text (no link may be in it). */
  const answers: [OperationId, number][] = [];
  const writerDoes = async (op: OperationId, method: string, path: string, body?: unknown) => {
    const answer = await call(writerKey, method, path, body);
    answers.push([op, answer.status]);
    assert(!/\/approve\/[A-Za-z0-9_-]{43}/.test(answer.text), `${op} shows a link: ${answer.text}`);
    return answer;
  };

  /** Every message handed to the SMTP server, once the outbox has none left to hand over. */
  const delivered = async (): Promise<void> => {
    await waitFor("the outbox to empty", async () => {
      const outbox = await stack.admin<{ data: OutboxMail[] }>("GET", "/admin/mail");
      return outbox.data.every((m) => m.status !== "pending");
    }, 15_000);
  };
  let read = 0;
  const decided: string[] = [];
  /** The writer opens each new message in its mailbox and approves through each link in it. */
  const approveFromMailbox = async (): Promise<void> => {
    await delivered();
    for (const mail of smtp.received.slice(read)) {
      if (!mail.to.includes(WRITERS_OWN)) continue;
      const text = parts(mail.raw)["text/plain"] ?? "";
      for (const url of text.match(/https?:\/\/\S+\/approve\/[A-Za-z0-9_-]{43}/g) ?? []) {
        const page = await fetch(url);
        const html = await page.text();
        const cookie = page.headers.get("set-cookie")?.split(";")[0];
        const hidden = (name: string): string =>
          new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
        const posted = await fetch(url, {
          method: "POST",
          redirect: "manual",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            origin: new URL(url).origin,
            "sec-fetch-site": "same-origin",
            ...(cookie ? { cookie } : {}),
          },
          body: new URLSearchParams({
            form: hidden("form"),
            digest: hidden("digest"),
            decision: "approve",
            signerName: "Not the customer",
          }).toString(),
        });
        await posted.body?.cancel();
        decided.push(`${url.slice(-8)}: ${posted.status}`);
      }
    }
    read = smtp.received.length;
  };

  // The shop's own proof for its customer, and a mock it shows.
  const quoteId = crypto.randomUUID();
  const shopsProof = await shopDoes("POST", "/v1/proofs", {
    quoteId,
    title: "Staff tees",
    recipientName: "Sam Nguyen",
    recipientEmail: CUSTOMER,
    imageUrls: [IMG],
    items: [{ description: "Gildan 5000 Black", sizes: [{ size: "M", quantity: 40 }] }],
  });

  const ids: Record<string, string> = {};
  // Every operation, in an order that would hand the writer a link if any could.
  const steps: Record<OperationId, () => Promise<void>> = {
    createMock: async () => {
      const mock = await writerDoes("createMock", "POST", "/v1/mocks", {
        quoteId,
        name: "Front",
        images: [IMG],
      });
      ids.mock = mock.data.id as string;
      ids.spareMock = (await writerDoes("createMock", "POST", "/v1/mocks", {
        quoteId,
        name: "Spare",
      })).data.id as string;
    },
    listMocks: async () =>
      void await writerDoes("listMocks", "GET", `/v1/mocks?quoteId=${quoteId}`),
    getMock: async () => void await writerDoes("getMock", "GET", `/v1/mocks/${ids.mock}`),
    updateMock: async () =>
      void await writerDoes("updateMock", "PATCH", `/v1/mocks/${ids.mock}`, { notes: "Final" }),
    createProof: async () => {
      const own = await writerDoes("createProof", "POST", "/v1/proofs", {
        quoteId,
        title: "Mine",
        recipientName: "Me",
        recipientEmail: WRITERS_OWN,
        mockIds: [ids.mock],
        items: [{ description: "Tee", sizes: [{ size: "M", quantity: 1 }] }],
      });
      ids.own = own.data.id as string;
      ids.spareProof = (await writerDoes("createProof", "POST", "/v1/proofs", {
        jobId: crypto.randomUUID(),
        recipientName: "Spare",
        recipientEmail: WRITERS_OWN,
        imageUrls: [IMG],
      })).data.id as string;
    },
    listProofs: async () => void await writerDoes("listProofs", "GET", "/v1/proofs"),
    getProof: async () => void await writerDoes("getProof", "GET", `/v1/proofs/${ids.own}`),
    updateProof: async () => {
      // The shop's proof, re-aimed at the writer's mailbox.
      await writerDoes("updateProof", "PATCH", `/v1/proofs/${shopsProof.id}`, {
        recipientEmail: WRITERS_OWN,
      });
      await writerDoes("updateProof", "PATCH", `/v1/proofs/${ids.own}`, { title: "Mine, v1" });
    },
    createProofItemLink: async () => {
      const item = await writerDoes("createProofItemLink", "POST", `/v1/proofs/${ids.own}/items`, {
        description: "Caps",
      });
      ids.item = item.data.id as string;
    },
    updateProofItemLink: async () =>
      void await writerDoes("updateProofItemLink", "PATCH", `/v1/proof-item-links/${ids.item}`, {
        sizes: [{ size: "OSFA", quantity: 5 }],
      }),
    deleteProofItemLink: async () =>
      void await writerDoes("deleteProofItemLink", "DELETE", `/v1/proof-item-links/${ids.item}`),
    reviseProof: async () =>
      void await writerDoes("reviseProof", "POST", `/v1/proofs/${ids.own}/revise`, {
        mockIds: [ids.mock],
      }),
    sendProof: async () => {
      for (const id of [ids.own, shopsProof.id]) {
        await writerDoes("sendProof", "POST", `/v1/proofs/${id}/send`, {});
        await writerDoes("sendProof", "POST", `/v1/proofs/${id}/send`, { to: WRITERS_OWN });
        await approveFromMailbox();
      }
    },
    sendProofs: async () => {
      await writerDoes("sendProofs", "POST", "/v1/proofs/send", {
        proofIds: [ids.own, shopsProof.id],
        to: WRITERS_OWN,
      });
      await writerDoes("sendProofs", "POST", "/v1/proofs/send", { proofIds: [ids.own] });
    },
    getProofHistory: async () =>
      void await writerDoes("getProofHistory", "GET", `/v1/proofs/${ids.own}/history`),
    setProofStatus: async () =>
      void await writerDoes("setProofStatus", "POST", `/v1/proofs/${ids.own}/status`, {
        status: "approved",
      }),
    recordClientDecision: async () =>
      void await writerDoes(
        "recordClientDecision",
        "POST",
        `/v1/proofs/${ids.own}/client-decision`,
        {
          decision: "approve",
          signerName: "Me",
        },
      ),
    confirmProofItemSizeSplit: async () => {
      const own = await shopDoes("GET", `/v1/proofs/${ids.own}`);
      const [item] = own.items as Json[];
      await writerDoes(
        "confirmProofItemSizeSplit",
        "POST",
        `/v1/proof-item-links/${item!.id}/size-split`,
        { sizes: [{ size: "M", quantity: 1 }] },
      );
    },
    deleteMock: async () =>
      void await writerDoes("deleteMock", "DELETE", `/v1/mocks/${ids.spareMock}`),
    deleteProof: async () =>
      void await writerDoes("deleteProof", "DELETE", `/v1/proofs/${ids.spareProof}`),
  };
  assertEquals(
    Object.keys(steps).sort(),
    Object.keys(proofsContract.operations).sort(),
    "every operation of the proofs contract is a step",
  );
  for (const step of Object.values(steps)) {
    await step();
    await approveFromMailbox();
  }
  // Last, the writer sends the shop's proof to the customer the shop chose: it goes, to them.
  await writerDoes("updateProof", "PATCH", `/v1/proofs/${shopsProof.id}`, {
    recipientEmail: CUSTOMER,
  });
  const toCustomer = await writerDoes("sendProof", "POST", `/v1/proofs/${shopsProof.id}/send`, {});
  await approveFromMailbox();

  const proofs = (await shopDoes("GET", "/v1/proofs?limit=100")).items as Json[];
  assertEquals(
    proofs.filter((p) => p.status === "approved").map((p) => p.id),
    [],
    `approved through the writer's mailbox (${decided.join(", ")})`,
  );
  assertEquals(decided, [], "no link reached the writer's mailbox");
  assertEquals(toCustomer.status, 200, toCustomer.text);
  assertEquals(smtp.received.map((m) => m.to), [[CUSTOMER]]);
  // What the writer could not do, it was told so.
  const refused = answers.filter(([, status]) => status === 403).map(([op]) => op);
  for (const op of ["sendProof", "sendProofs", "setProofStatus", "recordClientDecision"] as const) {
    assert(refused.includes(op), `${op} refused: ${JSON.stringify(answers)}`);
  }
});
