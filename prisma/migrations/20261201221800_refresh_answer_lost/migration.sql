-- A refresh whose answer was lost at an identity provider where the old access token proves nothing
-- (docs/spec-gaps.md A185): the app sends that refresh token never again and serves on the old access
-- token until it expires, while the operator is asked to reconnect. Set once, when the app decides so.
ALTER TABLE token_grants ADD COLUMN refresh_answer_lost_at timestamptz(3);

-- What the app has seen the identity provider do (A186): whether an access token still works after
-- the refresh that replaced it. One row per issuer; `claimed_at` lets one process observe at a time.
CREATE TABLE issuer_facts (
  issuer text PRIMARY KEY,
  old_access_tokens text,
  observed_at timestamptz(3),
  claimed_at timestamptz(3)
);
