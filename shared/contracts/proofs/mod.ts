/** The proofs service's contract: it serves no operations yet, only its health check. */
import { serviceContract } from "../operation.ts";

export const proofsContract = serviceContract("proofs", {});

export const proofsEvents = {};
