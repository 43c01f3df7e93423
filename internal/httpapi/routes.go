package httpapi

import "waymark/internal/campaign"

// routes registers the API's routes except the screens' reads and streams
// (screenRoutes, handle_screens.go) and what other packages mount on the
// server (the web UI's Register, MCP's /mcp); scenario/authz's matrix lists
// every route of the assembled application.
func (s *Server) routes() {
	// Operations, public.
	s.HandlePublic("GET /healthz", s.handleHealthz)
	s.HandlePublic("GET /readyz", s.handleReadyz)
	s.HandlePublic("GET /metrics", s.handleMetrics())

	// Session.
	s.HandlePublic("POST /api/login", s.handleLogin)
	s.HandlePublic("POST /api/login/typo3", s.handleTicketLogin)
	s.Handle("POST /api/logout", s.handleLogout)
	s.Handle("GET /api/me", s.handleMe)
	s.Handle("PUT /api/me/language", s.handleMeLanguage)

	// Runs (API.md §3), when a runtime is wired in.
	if s.runtime != nil {
		s.Handle("POST /api/runs", s.handleRunCreate)
		s.Handle("GET /api/runs/{uuid}", s.handleRunGet)
		s.Handle("GET /api/runs/{uuid}/events", s.handleRunEvents)
		s.Handle("POST /api/runs/{uuid}/approval", s.handleRunApproval)
		s.Handle("POST /api/runs/{uuid}/input", s.handleRunInput)
		s.Handle("POST /api/runs/{uuid}/cancel", s.handleRunCancel)
		s.Handle("POST /api/runs/{uuid}/cancel-if-waiting", s.handleRunCancelIfWaiting)
		s.Handle("GET /api/inbox", s.handleInbox)
		if s.ender != nil {
			s.Handle("POST /api/runs/{uuid}/end-process", s.handleEndProcess)
		}
		if s.catalogue != nil {
			s.Handle("GET /api/configurations/{uid}/process-skills", s.handleProcessSkills)
		}
	}

	// Skills (ADR-214 item 10), when a skill store is wired in.
	if s.skills != nil {
		s.Handle("GET /api/skills", s.handleSkillList)
		s.Handle("POST /api/skills", s.handleSkillCreate)
		s.Handle("GET /api/skills/{uid}", s.handleSkillGet)
		s.Handle("PUT /api/skills/{uid}", s.handleSkillUpdate)
		s.Handle("POST /api/skills/{uid}/approve", s.handleSkillApprove)
		s.Handle("POST /api/skills/{uid}/revoke", s.handleSkillRevoke)
		s.Handle("POST /api/skills/{uid}/enable", s.handleSkillEnable)
		s.Handle("POST /api/skills/{uid}/disable", s.handleSkillDisable)
		s.Handle("GET /api/configurations/{cfg}/skills", s.handleSkillCatalogue)
		s.Handle("POST /api/configurations/{cfg}/skills", s.handleSkillAttach)
		s.Handle("DELETE /api/configurations/{cfg}/skills/{skill}", s.handleSkillDetach)
		s.Handle("GET /api/skill-sources", s.handleSkillSourceList)
		s.Handle("POST /api/skill-sources", s.handleSkillSourcePut)
		s.Handle("POST /api/skill-sources/{uid}/sync", s.handleSkillSourceSync)
	}

	// Guided chat (ADR-022 and the card answers).
	if s.chat != nil {
		s.Handle("POST /api/conversations", s.handleConversationStart)
		s.Handle("GET /api/conversations", s.handleConversationList)
		s.Handle("GET /api/conversations/{id}", s.handleConversationGet)
		s.Handle("POST /api/conversations/{id}/messages", s.handleConversationMessage)
		s.Handle("POST /api/conversations/{id}/answer", s.handleConversationAnswer)
		s.Handle("POST /api/conversations/{id}/end-tour", s.handleConversationEndTour)
		s.Handle("POST /api/conversations/{id}/stop", s.handleConversationStop)
		s.Handle("POST /api/conversations/{id}/skill", s.handleConversationSkill)
		s.Handle("GET /api/conversations/{id}/stream", s.handleConversationStream)
	}
	if s.points != nil {
		s.Handle("GET /api/pages/{uid}/open-points", s.handlePageOpenPoints)
		s.Handle("GET /api/open-points", s.handleOpenPoints)
	}

	// Administration: administrators only, 403 before any lookup.
	s.HandleAdmin("GET /api/admin/users", s.handleAdminUserList)
	s.HandleAdmin("POST /api/admin/users", s.handleAdminUserCreate)
	s.HandleAdmin("GET /api/admin/users/{uid}", s.handleAdminUserGet)
	s.HandleAdmin("PUT /api/admin/users/{uid}", s.handleAdminUserUpdate)
	s.HandleAdmin("PUT /api/admin/users/{uid}/grants", s.handleAdminUserGrants)
	s.HandleAdmin("POST /api/admin/users/{uid}/tokens", s.handleAdminTokenCreate)
	s.HandleAdmin("GET /api/admin/users/{uid}/tokens", s.handleAdminTokenList)
	s.HandleAdmin("DELETE /api/admin/users/{uid}/tokens/{id}", s.handleAdminTokenDelete)
	s.HandleAdmin("GET /api/admin/groups", s.handleAdminGroupList)
	s.HandleAdmin("POST /api/admin/groups", s.handleAdminGroupCreate)
	s.HandleAdmin("GET /api/admin/groups/{uid}", s.handleAdminGroupGet)
	s.HandleAdmin("PUT /api/admin/groups/{uid}", s.handleAdminGroupUpdate)
	s.HandleAdmin("PUT /api/admin/groups/{uid}/grants", s.handleAdminGroupGrants)
	if s.configs != nil {
		s.HandleAdmin("GET /api/admin/configurations", s.handleAdminConfigurationList)
		s.HandleAdmin("POST /api/admin/configurations", s.handleAdminConfigurationCreate)
		s.HandleAdmin("GET /api/admin/configurations/{uid}", s.handleAdminConfigurationGet)
		s.HandleAdmin("PUT /api/admin/configurations/{uid}", s.handleAdminConfigurationUpdate)
		if s.catalogue != nil {
			s.HandleAdmin("GET /api/admin/configurations/{uid}/process-skills", s.handleAdminProcessSkills)
		}
	}
	if s.runtime != nil {
		s.HandleAdmin("GET /api/admin/runs", s.handleAdminRunList)
		if s.configs != nil {
			s.HandleAdmin("POST /api/admin/configurations/{uid}/test", s.handleAdminConfigurationTest)
		}
	}

	// Campaigns: one process over many pages, one review list (a campaign
	// is its owner's and administrators'; others get 404 like unknown).
	if s.campaigns != nil {
		s.Handle("POST /api/campaigns", s.handleCampaignCreate)
		s.Handle("POST /api/campaigns/estimate", s.handleCampaignEstimate)
		s.Handle("GET /api/campaigns", s.handleCampaignList)
		s.Handle("GET /api/campaigns/{id}", s.handleCampaignGet)
		s.Handle("POST /api/campaigns/{id}/pause", s.handleCampaignChange(campaign.EventPause))
		s.Handle("POST /api/campaigns/{id}/resume", s.handleCampaignChange(campaign.EventResume))
		s.Handle("POST /api/campaigns/{id}/cancel", s.handleCampaignChange(campaign.EventCancel))
		s.Handle("GET /api/campaigns/{id}/cards", s.handleCampaignCards)
		s.Handle("POST /api/campaigns/{id}/answers", s.handleCampaignAnswers)
	}

	// What the model calls cost, per month and configuration: administrators.
	s.HandleAdmin("GET /api/costs", s.handleCosts)
	// The applied changes, as CSV or JSON: administrators all, others their own.
	s.Handle("GET /api/changes", s.handleChanges)
}
