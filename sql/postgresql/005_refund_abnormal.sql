-- WeChat's REFUND.ABNORMAL is not a failure: the refund waits for manual handling at the
-- platform and may still pay out. The refund stays processing with a finding of its own
-- kind until SUCCESS or CLOSED settles it.
ALTER TABLE findings DROP CONSTRAINT findings_kind_check;
ALTER TABLE findings ADD CONSTRAINT findings_kind_check CHECK (kind IN ('effect_mismatch','missing_outbox','stuck_paying','stuck_accepted','amount_mismatch','double_payment','oversold','refund_failed','refund_abnormal'));
