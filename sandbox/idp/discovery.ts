// GET {issuer}/.well-known/openid-configuration and the JWKS it points to.
// Shaped like Hydra's document (public-facts.md): authorization, token, jwks, userinfo and revocation
// endpoints and token_endpoint_auth_methods_supported; no introspection endpoint is advertised.
// POST /_sandbox/idp-behaviour {"discovery": "503" | "404"} makes it answer as an issuer that is away.
import { Hono } from "hono";
import type { SandboxContext } from "../context.js";
import { SCOPES_SUPPORTED } from "../scopes.js";

export function discoveryRoutes(ctx: SandboxContext): Hono {
  const app = new Hono();

  app.get("/.well-known/openid-configuration", (c) => {
    // The switch "discovery down" (idp/behaviour.ts): an issuer that is away, or a misspelt one.
    if (ctx.idpBehaviour.discovery === "503") return c.text("Service Unavailable", 503);
    if (ctx.idpBehaviour.discovery === "404") return c.text("404 page not found", 404);
    const issuer = ctx.issuer();
    return c.json({
      issuer,
      authorization_endpoint: `${issuer}/oauth2/auth`,
      token_endpoint: `${issuer}/oauth2/token`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      userinfo_endpoint: `${issuer}/userinfo`,
      revocation_endpoint: `${issuer}/oauth2/revoke`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      scopes_supported: [...SCOPES_SUPPORTED],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256"],
      // As Hydra lists them. The app's client is registered for client_secret_post only (contract §5.2).
      token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic", "private_key_jwt", "none"],
      claims_supported: ["sub"],
      // RFC 9207: every authorization response carries `iss`, so a client can tell which server sent
      // it (mix-up attacks). Hydra advertises it too. It stays advertised when the switch leaves `iss`
      // out of the redirect, which is exactly the case a client must refuse.
      authorization_response_iss_parameter_supported: true,
    });
  });

  // No ID tokens are issued in this flow, so the key set is empty; it exists so jwks_uri does not dangle.
  app.get("/.well-known/jwks.json", (c) => c.json({ keys: [] }));

  app.get("/userinfo", (c) =>
    c.json(
      {
        error: "invalid_request",
        error_description:
          "The sandbox issues no OpenID Connect identity (the openid scope is never granted). Use GET /api/v1/consumers/me to learn which operator a token belongs to.",
      },
      401,
    ),
  );

  return app;
}
