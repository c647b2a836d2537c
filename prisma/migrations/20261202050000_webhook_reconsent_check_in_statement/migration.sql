-- A re-consent's install.created in one round trip, its check's job included (issue 34;
-- lib/webhooks/handlers/install-created.ts). Migration 20261127022222_webhook_reconsent_one_statement
-- left the job (pg-boss's row) to a second round trip after the statement. This function runs
-- webhook_install_created, then, for the install it asks to check, pg-boss's own insert of that job:
-- the statement's text and its one text parameter as pg-boss wrote them (lib/jobs/enqueue.ts,
-- followUpStatement), with the install's row id put where the placeholder stands. So nothing here
-- knows pg-boss's tables, and webhook_install_created is unchanged.
--
-- It also takes the re-consent webhook_install_created leaves to the full transaction: an install
-- flagged NEEDS_REAUTH or REINSTALL_NEEDED (the operator reconnecting from the portal). Its check is
-- the throttled re-authorization probe, which the "never checked" marker would bypass, so it has no
-- durable request but the job: as in the full transaction, the delivery is recorded with its job or
-- not at all (the insert's failure fails the statement, and the receiver answers 503, or, for a lock
-- it could not get within 250 ms, leaves it to the full transaction, which waits longer).
--
-- For an ACTIVE or REVOKED install, the insert runs in a subtransaction, waiting at most 250 ms for
-- a lock: a job engine that refuses the job or holds its table leaves the delivery recorded all the
-- same (webhook_install_created has made the check durable, as before) and answers
-- check_enqueued = false, and the receiver enqueues the job after the commit, as before
-- (lib/webhooks/receive.ts). A subtransaction costs only the deliveries that ask for a check.
--
-- EXECUTE runs the text with the caller's own rights (the function is not SECURITY DEFINER):
-- nothing the caller could not send itself. The app makes the text, never from a delivery's content.
CREATE FUNCTION "webhook_install_created_with_check"(
    p_lock_key TEXT,
    p_dedupe_key TEXT,
    p_install_id INTEGER,
    p_client_id TEXT,
    p_operator_id TEXT,
    p_slug TEXT,
    p_delivered_at TIMESTAMPTZ,
    p_payload JSONB,
    p_sync_incident_prefix TEXT,
    p_check_sql TEXT,
    p_check_param TEXT,
    p_check_placeholder TEXT,
    OUT outcome TEXT,
    OUT check_install_row_id UUID,
    OUT check_enqueued BOOLEAN
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    previous_lock_timeout TEXT := current_setting('lock_timeout');
    known_id UUID;
    known_status install_status;
BEGIN
    -- A flagged install of this operator, re-consented: only with the job's insert to hand.
    IF p_check_sql IS NOT NULL THEN
        SELECT id, status INTO known_id, known_status FROM installs
        WHERE install_id = p_install_id AND operator_id = p_operator_id AND status IN ('NEEDS_REAUTH', 'REINSTALL_NEEDED');
    END IF;
    IF known_id IS NOT NULL THEN
        -- As webhook_install_created's known-install branch, less the marker; the row lock is all
        -- this needs (it changes no install's state), and a row that moved raises STATE_MOVED.
        INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
        VALUES (gen_random_uuid(), p_dedupe_key, 'install.created', p_install_id, p_delivered_at, 'processed',
                'install ' || p_install_id || ' already known', p_payload)
        ON CONFLICT (dedupe_key) DO NOTHING;
        IF NOT FOUND THEN
            outcome := 'duplicate';
            check_enqueued := false;
            RETURN;
        END IF;
        UPDATE installs SET slug = COALESCE(NULLIF(p_slug, ''), slug), updated_at = now()
        WHERE id = known_id AND status = known_status;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'install % moved while its install.created was recorded', p_install_id USING ERRCODE = 'PAF01';
        END IF;
        PERFORM set_config('lock_timeout', '250ms', true);
        EXECUTE p_check_sql USING replace(p_check_param, p_check_placeholder, known_id::text);
        PERFORM set_config('lock_timeout', previous_lock_timeout, true);
        outcome := 'processed';
        check_install_row_id := known_id;
        check_enqueued := true;
        RETURN;
    END IF;

    SELECT r.outcome, r.check_install_row_id INTO outcome, check_install_row_id
    FROM webhook_install_created(p_lock_key, p_dedupe_key, p_install_id, p_client_id, p_operator_id, p_slug,
                                 p_delivered_at, p_payload, p_sync_incident_prefix) r;
    check_enqueued := false;
    IF check_install_row_id IS NULL OR p_check_sql IS NULL THEN
        RETURN;
    END IF;
    BEGIN
        PERFORM set_config('lock_timeout', '250ms', true);
        EXECUTE p_check_sql USING replace(p_check_param, p_check_placeholder, check_install_row_id::text);
        PERFORM set_config('lock_timeout', previous_lock_timeout, true);
        check_enqueued := true;
    EXCEPTION WHEN OTHERS THEN
        -- Rolled back to the block's start, the lock timeout with it; the delivery stays recorded.
        check_enqueued := false;
    END;
END
$$;
