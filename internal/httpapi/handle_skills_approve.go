package httpapi

import (
	"net/http"

	"waymark/internal/skill"
)

// digestRequest is the body of approve and revoke: the version digest the
// caller was shown.
type digestRequest struct {
	Digest string `json:"digest"`
}

// readDigest refuses a caller without the reviewer right first — before the
// path or the body is read or anything looked up — and then
// reads the skill uid and the digest.
func readDigest(r *http.Request) (int64, string, error) {
	if err := requireReviewer(r); err != nil {
		return 0, "", err
	}
	uid, err := pathUID(r, "uid")
	if err != nil {
		return 0, "", err
	}
	var body digestRequest
	if err := DecodeJSON(r, &body); err != nil {
		return 0, "", err
	}
	if err := skill.ParseDigest(body.Digest); err != nil {
		return 0, "", errBadRequest.With("digest: %s", err.Error())
	}
	return uid, body.Digest, nil
}

// handleSkillApprove answers POST /api/skills/{uid}/approve {digest}: the
// store decides who may approve (administrators and skill approvers, as
// stored now) and refuses a digest that is not the current one (409
// stale_digest); a caller without the right is refused 403 before anything
// is looked up and not audited (the request metrics count it). 200 with the
// approval snapshot.
func (s *Server) handleSkillApprove(w http.ResponseWriter, r *http.Request) error {
	uid, digest, err := readDigest(r)
	if err != nil {
		return err
	}
	a, err := s.skills.Approve(r.Context(), ActorFrom(r.Context()).UID, uid, digest)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, a)
}

// handleSkillRevoke answers POST /api/skills/{uid}/revoke {digest}: every
// approval of that digest is revoked; a digest never approved for the skill
// is 404 unknown_digest. 200 with the skill's approvals after the revocation.
func (s *Server) handleSkillRevoke(w http.ResponseWriter, r *http.Request) error {
	uid, digest, err := readDigest(r)
	if err != nil {
		return err
	}
	if err := s.skills.Revoke(r.Context(), ActorFrom(r.Context()).UID, uid, digest); err != nil {
		return err
	}
	approvals, err := s.skills.Approvals(r.Context(), uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"skill": uid, "digest": digest, "approvals": nonNil(approvals)})
}
