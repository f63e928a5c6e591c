/**
 * Encryption of webhook signing secrets at rest: AES-256-GCM under a key derived with HKDF-SHA256
 * from a configuration string. Sealed layout: 1 version byte, 12-byte random IV, ciphertext and
 * 16-byte tag.
 */

export interface SecretBox {
  seal(plaintext: string): Promise<Uint8Array>;
  /** Throws when `sealed` was altered, is not a sealed value, or was sealed under another key. */
  open(sealed: Uint8Array): Promise<string>;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MIN_KEY_MATERIAL_LENGTH = 32;
const HKDF_SALT = new TextEncoder().encode("printshop/webhook-secrets/v1/salt");
const HKDF_INFO = new TextEncoder().encode("printshop/webhook-secrets/v1");

/** The box for `keyMaterial`, a configuration secret of at least 32 characters. */
export async function createSecretBox(keyMaterial: string): Promise<SecretBox> {
  if (keyMaterial.length < MIN_KEY_MATERIAL_LENGTH) {
    throw new Error(
      `Webhook secret key material must be at least ${MIN_KEY_MATERIAL_LENGTH} characters`,
    );
  }
  const baseKey = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(keyMaterial),
    "HKDF",
    false,
    ["deriveKey"],
  );
  const key = await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: HKDF_SALT, info: HKDF_INFO },
    baseKey,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  // The version byte is authenticated too, so it cannot be swapped without `open` failing.
  const additionalData = Uint8Array.of(VERSION);

  return {
    async seal(plaintext: string): Promise<Uint8Array> {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const ciphertext = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData },
        key,
        new TextEncoder().encode(plaintext),
      );
      const sealed = new Uint8Array(1 + IV_BYTES + ciphertext.byteLength);
      sealed[0] = VERSION;
      sealed.set(iv, 1);
      sealed.set(new Uint8Array(ciphertext), 1 + IV_BYTES);
      return sealed;
    },

    async open(sealed: Uint8Array): Promise<string> {
      if (sealed.length < 1 + IV_BYTES + TAG_BYTES) {
        throw new Error("Sealed webhook secret is too short to be a sealed value");
      }
      if (sealed[0] !== VERSION) {
        throw new Error(`Sealed webhook secret has unknown format version ${sealed[0]}`);
      }
      let plaintext: ArrayBuffer;
      try {
        plaintext = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: sealed.slice(1, 1 + IV_BYTES), additionalData },
          key,
          sealed.slice(1 + IV_BYTES),
        );
      } catch (error) {
        throw new Error(
          "Sealed webhook secret could not be opened: it was altered or sealed under another key",
          { cause: error },
        );
      }
      return new TextDecoder("utf-8", { fatal: true }).decode(plaintext);
    },
  };
}
