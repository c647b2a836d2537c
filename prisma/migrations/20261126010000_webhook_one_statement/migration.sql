-- The webhook ingest's one-statement paths for install.created, install.revoked and
-- install.config.updated (lib/webhooks/handlers/; contract §6). Each function
-- is called in one statement, so one round trip records the delivery and applies its effect in the
-- statement's own transaction: both commit, or neither.
--
-- Why functions and not one SQL statement: in PL/pgSQL each statement of a VOLATILE function takes a
-- fresh snapshot (READ COMMITTED), so after a row lock the function sees what the lock waited for,
-- exactly as the full transaction's next statement does. One data-modifying CTE shares one snapshot,
-- taken before any lock wait.
--
-- Each function decides only the states it can decide alone and answers 'full' (having written
-- nothing) for the others, which the full transaction then handles (lib/webhooks/receive.ts). The
-- order of writes is the full transaction's: the delivery row under its unique key first, then the
-- install row, so a copy of the same delivery on the other path waits rather than deadlocks. The
-- outcome written with the delivery is decided from a read before its lock; if the locked row says
-- otherwise (another transaction moved it meanwhile), the function raises SQLSTATE 'PAF01', the
-- statement is rolled back whole, and the caller takes the full transaction.

-- install.revoked: an ACTIVE install with no open sync incident (revoking one in trouble, or with a
-- sync incident open, raises or closes an alert: lib/alerts/incidents.ts, the full transaction's),
-- an install already revoked, or an install_id never seen while the operator has no live install
-- whose install_id is unknown (that one needs a check with the API, a job: the full transaction's).
CREATE FUNCTION "webhook_install_revoked"(
    p_dedupe_key TEXT,
    p_install_id INTEGER,
    p_client_id TEXT,
    p_operator_id TEXT,
    p_slug TEXT,
    p_delivered_at TIMESTAMPTZ,
    p_payload JSONB,
    p_sync_incident_prefix TEXT
) RETURNS TEXT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    target_id UUID;
    target_status install_status;
    new_row_id UUID;
BEGIN
    -- A copy of a delivery already recorded: no lock taken, nothing written.
    IF EXISTS (SELECT FROM webhook_deliveries WHERE dedupe_key = p_dedupe_key) THEN
        RETURN 'duplicate';
    END IF;

    SELECT id, status INTO target_id, target_status FROM installs WHERE install_id = p_install_id;

    IF target_id IS NULL THEN
        IF EXISTS (SELECT FROM installs WHERE client_id = p_client_id AND operator_id = p_operator_id
                   AND status = 'ACTIVE' AND install_id IS NULL) THEN
            RETURN 'full';
        END IF;
        INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
        VALUES (gen_random_uuid(), p_dedupe_key, 'install.revoked', p_install_id, p_delivered_at, 'processed',
                'install ' || p_install_id || ' recorded as revoked', p_payload)
        ON CONFLICT (dedupe_key) DO NOTHING;
        IF NOT FOUND THEN
            RETURN 'duplicate';
        END IF;
        -- History only (lib/installs/register.ts, recordRevokedInstall). An install_id recorded
        -- meanwhile fails this insert (unique), and the caller takes the full transaction.
        INSERT INTO installs (id, install_id, client_id, operator_id, slug, granted_scopes, status, revoked_at, updated_at)
        VALUES (gen_random_uuid(), p_install_id, p_client_id, p_operator_id, p_slug, '{}', 'REVOKED', now(), now())
        RETURNING id INTO new_row_id;
        INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
        VALUES (gen_random_uuid(), new_row_id, NULL, 'REVOKED', 'webhook', 'install.revoked for an install the app had not seen');
        RETURN 'processed';
    END IF;

    IF target_status = 'REVOKED' THEN
        -- Revoked is final (contract §3): nothing can have moved it, and nothing moves.
        INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
        VALUES (gen_random_uuid(), p_dedupe_key, 'install.revoked', p_install_id, p_delivered_at, 'processed',
                'install ' || p_install_id || ' already revoked', p_payload)
        ON CONFLICT (dedupe_key) DO NOTHING;
        RETURN CASE WHEN FOUND THEN 'processed' ELSE 'duplicate' END;
    END IF;

    IF target_status <> 'ACTIVE'
       OR EXISTS (SELECT FROM alert_incidents WHERE key = p_sync_incident_prefix || target_id AND open) THEN
        RETURN 'full';
    END IF;

    INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
    VALUES (gen_random_uuid(), p_dedupe_key, 'install.revoked', p_install_id, p_delivered_at, 'processed',
            'install ' || p_install_id || ' revoked', p_payload)
    ON CONFLICT (dedupe_key) DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'duplicate';
    END IF;
    -- The move itself (lib/installs/state.ts, transitionInstall), its row lock taken by the UPDATE.
    UPDATE installs SET status = 'REVOKED', status_changed_at = now(), revoked_at = now(), updated_at = now()
    WHERE id = target_id AND status = 'ACTIVE';
    IF NOT FOUND
       OR EXISTS (SELECT FROM alert_incidents WHERE key = p_sync_incident_prefix || target_id AND open) THEN
        RAISE EXCEPTION 'install % moved while its revocation was recorded', p_install_id USING ERRCODE = 'PAF01';
    END IF;
    -- contract §6: the app stops using tokens for a revoked install; keep no secret it cannot use.
    DELETE FROM token_grants WHERE install_row_id = target_id;
    INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
    VALUES (gen_random_uuid(), target_id, 'ACTIVE', 'REVOKED', 'webhook', 'install.revoked');
    RETURN 'processed';
END
$$;

-- install.config.updated: every state (the full transaction is left only the payloads it refuses).
-- A delivery older than the stored configuration, or for an install unknown or revoked, is recorded
-- and changes nothing (lib/webhooks/handlers/install-config-updated.ts).
CREATE FUNCTION "webhook_install_config_updated"(
    p_dedupe_key TEXT,
    p_install_id INTEGER,
    p_delivered_at TIMESTAMPTZ,
    p_config JSONB,
    p_payload JSONB
) RETURNS TEXT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    target_id UUID;
BEGIN
    IF EXISTS (SELECT FROM webhook_deliveries WHERE dedupe_key = p_dedupe_key) THEN
        RETURN 'duplicate';
    END IF;

    SELECT id INTO target_id FROM installs
    WHERE install_id = p_install_id AND status <> 'REVOKED'
      AND (config_updated_at IS NULL OR config_updated_at < p_delivered_at);

    INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
    VALUES (gen_random_uuid(), p_dedupe_key, 'install.config.updated', p_install_id, p_delivered_at, 'processed',
            CASE WHEN target_id IS NULL
                 THEN 'install ' || p_install_id || ' unknown, revoked, or has a newer configuration'
                 ELSE 'configuration of install ' || p_install_id || ' stored' END,
            p_payload)
    ON CONFLICT (dedupe_key) DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'duplicate';
    END IF;
    IF target_id IS NOT NULL THEN
        UPDATE installs SET config = p_config, config_updated_at = p_delivered_at, updated_at = now()
        WHERE id = target_id AND status <> 'REVOKED'
          AND (config_updated_at IS NULL OR config_updated_at < p_delivered_at);
        IF NOT FOUND THEN
            RAISE EXCEPTION 'install % moved while its configuration was recorded', p_install_id USING ERRCODE = 'PAF01';
        END IF;
    END IF;
    RETURN 'processed';
END
$$;

-- install.created: a first install of an operator the app has never heard of (created ACTIVE), a
-- re-install that supersedes the operator's ACTIVE install (revoked, its grant deleted, unless a
-- sync incident is open: closing it raises an alert), and a late announcement of an install older
-- than the live one (recorded as revoked history). The decisions of lib/installs/register.ts
-- (recordInstall), under the same advisory lock. An install_id already stored (a re-consent, the
-- redirect_uri first: the full transaction learns what is new and checks the install with the API,
-- a job) and a live install without an install_id (the same install, perhaps) answer 'full'.
CREATE FUNCTION "webhook_install_created"(
    p_lock_key TEXT,
    p_dedupe_key TEXT,
    p_install_id INTEGER,
    p_client_id TEXT,
    p_operator_id TEXT,
    p_slug TEXT,
    p_delivered_at TIMESTAMPTZ,
    p_payload JSONB,
    p_sync_incident_prefix TEXT
) RETURNS TEXT LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    live_id UUID;
    live_install_id INTEGER;
    live_status install_status;
    locked_id UUID;
    locked_install_id INTEGER;
    locked_status install_status;
    new_status install_status := 'ACTIVE';
    new_detail TEXT := 'install recorded';
    new_row_id UUID;
BEGIN
    -- A copy of a delivery already recorded: no lock taken (a flood of copies does not queue on it).
    IF EXISTS (SELECT FROM webhook_deliveries WHERE dedupe_key = p_dedupe_key) THEN
        RETURN 'duplicate';
    END IF;

    -- A first read, without the lock: the states left to the full transaction answer at once.
    IF EXISTS (SELECT FROM installs WHERE install_id = p_install_id) THEN
        RETURN 'full';
    END IF;
    SELECT id, install_id, status INTO live_id, live_install_id, live_status FROM installs
    WHERE client_id = p_client_id AND operator_id = p_operator_id AND status IN ('ACTIVE', 'NEEDS_REAUTH', 'REINSTALL_NEEDED');
    IF live_id IS NOT NULL AND (
        live_install_id IS NULL
        OR (live_install_id < p_install_id AND (
            live_status <> 'ACTIVE'
            OR EXISTS (SELECT FROM alert_incidents WHERE key = p_sync_incident_prefix || live_id AND open)))) THEN
        RETURN 'full';
    END IF;

    -- The delivery first (the full transaction's order), then the operator's lock.
    INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
    VALUES (gen_random_uuid(), p_dedupe_key, 'install.created', p_install_id, p_delivered_at, 'processed',
            'install ' || p_install_id || ' recorded', p_payload)
    ON CONFLICT (dedupe_key) DO NOTHING;
    IF NOT FOUND THEN
        RETURN 'duplicate';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext(p_lock_key));

    -- Under the lock every other writer of this operator's installs has committed: read again, and
    -- leave anything that moved since the first read to the full transaction.
    SELECT id, install_id, status INTO locked_id, locked_install_id, locked_status FROM installs
    WHERE client_id = p_client_id AND operator_id = p_operator_id AND status IN ('ACTIVE', 'NEEDS_REAUTH', 'REINSTALL_NEEDED');
    IF EXISTS (SELECT FROM installs WHERE install_id = p_install_id)
       OR locked_id IS DISTINCT FROM live_id
       OR locked_install_id IS DISTINCT FROM live_install_id
       OR locked_status IS DISTINCT FROM live_status THEN
        RAISE EXCEPTION 'the installs of operator % moved while install % was recorded', p_operator_id, p_install_id USING ERRCODE = 'PAF01';
    END IF;

    IF live_id IS NOT NULL AND live_install_id > p_install_id THEN
        -- install_ids increase (docs/spec-gaps.md A3): a late event about an older install is history.
        new_status := 'REVOKED';
        new_detail := 'older than live install ' || live_install_id;
    ELSIF live_id IS NOT NULL THEN
        -- A re-install: only the newer install can be active at the service (contract §2).
        UPDATE installs SET status = 'REVOKED', status_changed_at = now(), revoked_at = now(), updated_at = now()
        WHERE id = live_id AND status = 'ACTIVE';
        IF NOT FOUND
           OR EXISTS (SELECT FROM alert_incidents WHERE key = p_sync_incident_prefix || live_id AND open) THEN
            RAISE EXCEPTION 'install % moved while its successor % was recorded', live_install_id, p_install_id USING ERRCODE = 'PAF01';
        END IF;
        DELETE FROM token_grants WHERE install_row_id = live_id;
        INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
        VALUES (gen_random_uuid(), live_id, 'ACTIVE', 'REVOKED', 'webhook', 'superseded by install ' || p_install_id);
    END IF;

    INSERT INTO installs (id, install_id, client_id, operator_id, slug, granted_scopes, status, revoked_at, updated_at)
    VALUES (gen_random_uuid(), p_install_id, p_client_id, p_operator_id, p_slug, '{}', new_status,
            CASE WHEN new_status = 'REVOKED' THEN now() END, now())
    RETURNING id INTO new_row_id;
    INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
    VALUES (gen_random_uuid(), new_row_id, NULL, new_status, 'webhook', new_detail);
    RETURN 'processed';
END
$$;
