package access_test

import (
	"fmt"
	"testing"
)

func TestCheckerTableAccess(t *testing.T) {
	t.Parallel()
	runAnswers(t, []answer{
		{admin, readTable("pages"), true},
		{admin, modifyTable("tt_content"), true},
		{admin, modifyTable("be_users"), true},
		{editor, readTable("pages"), true},
		{editor, readTable("tt_content"), true},
		{editor, modifyTable("pages"), true},
		{editor, modifyTable("tt_content"), true}, // granted only by subgroup 2
		{editor, readTable("be_users"), false},
		{editor, modifyTable("be_users"), false},
		{seoEditor, modifyTable("tt_content"), true}, // two levels down: 3 → 1 → 2
		{seoEditor, readTable("pages"), true},
		{otherEditor, readTable("tt_content"), true},
		{otherEditor, modifyTable("pages"), true},
		{disabledUser, readTable("pages"), false},
		{disabledUser, modifyTable("pages"), false},
		{disabledAdm, readTable("pages"), false},
		{nobody, readTable("pages"), false},
	})
}

func TestCheckerExcludedFields(t *testing.T) {
	t.Parallel()
	runAnswers(t, []answer{
		{admin, editField("pages", "description"), true},
		{admin, editField("tt_content", "colPos"), true},
		{admin, editField("pages", "nosuch"), false},
		{admin, editField("nosuch", "title"), false},
		{editor, editField("pages", "title"), true},
		{editor, editField("pages", "description"), false}, // exclude, no grant
		{editor, editField("tt_content", "header"), true},
		{editor, editField("tt_content", "colPos"), false},
		{seoEditor, editField("pages", "description"), true}, // exclude, granted by group 3
		{seoEditor, editField("pages", "seoTitle"), false},   // exclude, the grant names another field
		{seoEditor, editField("tt_content", "colPos"), false},
		{disabledUser, editField("pages", "title"), false},
		{disabledAdm, editField("pages", "description"), false},
		{nobody, editField("pages", "title"), false},
	})
}

func TestCheckerLanguages(t *testing.T) {
	t.Parallel()
	runAnswers(t, []answer{
		{admin, editLanguage(0), true},
		{admin, editLanguage(1), true},
		{editor, editLanguage(0), true}, // no group restricts: every language
		{editor, editLanguage(1), true},
		{editor, editLanguage(-1), true},
		{lang0Editor, editLanguage(0), true},
		{lang0Editor, editLanguage(1), false},
		{lang0Editor, editLanguage(-1), true}, // all-languages records, as in TYPO3
		{disabledUser, editLanguage(0), false},
		{nobody, editLanguage(0), false},
	})
}

func TestCheckerWebMounts(t *testing.T) {
	t.Parallel()
	runAnswers(t, []answer{
		{admin, inMount(pageRoot), true},
		{admin, inMount(pageOtherRoot), true},
		{admin, inMount(0), true},
		{editor, inMount(pageRoot), true}, // the mount point itself, pid 0
		{editor, inMount(pageAbout), true},
		{editor, inMount(pageAboutDE), true}, // translation: the default page's rootline
		{editor, inMount(pageDeleted), false},
		{editor, inMount(pageWorkspace), false},
		{editor, inMount(pageUnderDel), false}, // live, but its rootline is cut by a deleted page
		{editor, inMount(pageOtherRoot), false},
		{editor, inMount(pageOtherChild), false},
		{editor, inMount(0), false},
		{editor, inMount(999), false},
		{otherEditor, inMount(pageOtherRoot), true},
		{otherEditor, inMount(pageOtherChild), true},
		{otherEditor, inMount(pageRoot), false},
		{otherEditor, inMount(pageAbout), false},
		{disabledUser, inMount(pageAbout), false},
		{nobody, inMount(pageAbout), false},
	})
}

func TestCheckerShowPage(t *testing.T) {
	t.Parallel()
	answers := []answer{
		{admin, showPage(pageRoot), true},
		{admin, showPage(pageOtherRoot), true},
		{admin, showPage(0), true},
		{admin, showPage(pageDeleted), false}, // no one is shown a deleted page
		{admin, showPage(pageWorkspace), false},
		{editor, showPage(pageRoot), true},
		{editor, showPage(pageAbout), true},
		{editor, showPage(pageShowOnly), true},  // group bit 1
		{editor, showPage(pageOwner), true},     // owner bits
		{editor, showPage(pageEverybody), true}, // everybody bit 1
		{editor, showPage(pageAboutDE), true},
		{editor, showPage(pageDeleted), false},
		{editor, showPage(pageWorkspace), false},
		{editor, showPage(pageUnderDel), false},
		{editor, showPage(pageOtherRoot), false},
		{editor, showPage(0), false},
		{editor, showPage(999), false},
		{seoEditor, showPage(pageShowOnly), true}, // member of group 1 through subgroups
		{seoEditor, showPage(pageOwner), false},   // not the owner, no group, everybody 0
		{seoEditor, showPage(pageEverybody), true},
		{otherEditor, showPage(pageOtherChild), true},
		{otherEditor, showPage(pageEverybody), false}, // everybody may, but not outside the mount
		{disabledUser, showPage(pageAbout), false},
		{disabledAdm, showPage(pageAbout), false},
		{nobody, showPage(pageAbout), false},
	}
	// The same answers for a page record read already (page 0 has no record).
	for _, a := range answers[:len(answers):len(answers)] {
		var page int64
		if _, err := fmt.Sscanf(a.q.desc, "MayShowPage(%d)", &page); err != nil || page == 0 {
			continue
		}
		answers = append(answers, answer{a.user, showPageRecord(page), a.want})
	}
	// The same answers for every page asked about at once (the batch check of lists).
	for _, a := range answers[:len(answers):len(answers)] {
		var page int64
		if _, err := fmt.Sscanf(a.q.desc, "MayShowPage(%d)", &page); err == nil {
			answers = append(answers, answer{a.user, showPageInBatch(page), a.want})
		}
	}
	runAnswers(t, answers)
}

func TestCheckerEditContentOnPage(t *testing.T) {
	t.Parallel()
	runAnswers(t, []answer{
		{admin, editContent(pageAbout), true},
		{admin, editContent(0), true},
		{admin, editContent(pageDeleted), false},
		{editor, editContent(pageRoot), true},
		{editor, editContent(pageAbout), true},
		{editor, editContent(pageShowOnly), false}, // show bit only
		{editor, editContent(pageOwner), true},     // owner bits 31
		{editor, editContent(pageEverybody), false},
		{editor, editContent(pageAboutDE), true}, // the default page's bits decide
		{editor, editContent(pageDeleted), false},
		{editor, editContent(pageWorkspace), false},
		{editor, editContent(pageOtherRoot), false},
		{editor, editContent(0), false},
		{lang0Editor, editContent(pageAbout), true},
		{otherEditor, editContent(pageOtherChild), true},
		{otherEditor, editContent(pageAbout), false},
		{disabledUser, editContent(pageAbout), false},
		{nobody, editContent(pageAbout), false},
	})
}

func TestCheckerReadRecord(t *testing.T) {
	t.Parallel()
	runAnswers(t, []answer{
		{admin, readRecord("tt_content", ceRoot), true},
		{admin, readRecord("tt_content", ceOther), true},
		{admin, readRecord("tt_content", ceDeleted), false},
		{admin, readRecord("tt_content", ceWorkspace), false},
		{admin, readRecord("pages", pageDeleted), false},
		{editor, readRecord("tt_content", ceDefault), true},
		{editor, readRecord("tt_content", ceGerman), true},
		{editor, readRecord("tt_content", ceAll), true},
		{editor, readRecord("tt_content", ceShowOnly), true}, // reading needs the show bit only
		{editor, readRecord("tt_content", ceRoot), false},    // root level: admins only
		{editor, readRecord("tt_content", ceDeleted), false},
		{editor, readRecord("tt_content", ceWorkspace), false},
		{editor, readRecord("tt_content", ceOther), false},
		{editor, readRecord("tt_content", ceOnDelPage), false},
		{editor, readRecord("pages", pageRoot), true}, // pid 0 page through the mount
		{editor, readRecord("pages", pageAboutDE), true},
		{editor, readRecord("pages", pageDeleted), false},
		{editor, readRecord("pages", pageWorkspace), false},
		{editor, readRecord("pages", pageOtherRoot), false},
		{lang0Editor, readRecord("tt_content", ceGerman), true}, // languages restrict editing, not reading
		{otherEditor, readRecord("tt_content", ceOther), true},
		{otherEditor, readRecord("tt_content", ceDefault), false},
		{disabledUser, readRecord("tt_content", ceDefault), false},
		{disabledAdm, readRecord("tt_content", ceRoot), false},
		{nobody, readRecord("tt_content", ceDefault), false},
	})
}

func TestCheckerAuthorizeWrite(t *testing.T) {
	t.Parallel()
	runAnswers(t, []answer{
		{admin, write("tt_content", ceRoot, "header"), true},
		{admin, write("pages", pageRoot, "description"), true},
		{admin, write("pages", pageOtherRoot, "slug"), true},
		{admin, write("tt_content", ceDeleted, "header"), false}, // deleted: no one
		{admin, write("tt_content", ceWorkspace, "header"), false},
		{admin, write("pages", pageDeleted, "title"), false},
		{admin, write("pages", pageWorkspace, "title"), false},
		{editor, write("tt_content", ceDefault, "header"), true},
		{editor, write("tt_content", ceGerman, "header"), true},
		{editor, write("tt_content", ceAll, "header", "bodytext"), true},
		{editor, write("tt_content", ceDefault, "colPos"), false}, // excluded
		{editor, write("tt_content", ceDefault, "nosuch"), false},
		{editor, write("tt_content", ceRoot, "header"), false}, // root level
		{editor, write("tt_content", ceDeleted, "header"), false},
		{editor, write("tt_content", ceWorkspace, "header"), false},
		{editor, write("tt_content", ceOther, "header"), false}, // outside the mount
		{editor, write("tt_content", ceOnDelPage, "header"), false},
		{editor, write("tt_content", ceShowOnly, "header"), false}, // no content bit
		{editor, write("pages", pageRoot, "title"), true},          // pid 0 page through the mount
		{editor, write("pages", pageAbout, "title"), true},
		{editor, write("pages", pageAbout, "description"), false},
		{editor, write("pages", pageShowOnly, "title"), false},
		{editor, write("pages", pageOwner, "title"), true},
		{editor, write("pages", pageAboutDE, "title"), true},
		{editor, write("pages", pageDeleted, "title"), false},
		{editor, write("pages", pageWorkspace, "title"), false},
		{editor, write("pages", pageUnderDel, "title"), false},
		{seoEditor, write("pages", pageAbout, "description"), true},
		{seoEditor, write("pages", pageAbout, "title", "seoTitle"), false}, // one field denied denies all
		{lang0Editor, write("tt_content", ceDefault, "header"), true},
		{lang0Editor, write("tt_content", ceGerman, "header"), false},
		{lang0Editor, write("tt_content", ceAll, "header"), true},
		{lang0Editor, write("pages", pageAboutDE, "title"), false},
		{otherEditor, write("tt_content", ceOther, "header"), true},
		{otherEditor, write("pages", pageOtherChild, "title"), true},
		{otherEditor, write("tt_content", ceDefault, "header"), false},
		{disabledUser, write("tt_content", ceDefault, "header"), false},
		{disabledAdm, write("tt_content", ceDefault, "header"), false},
		{nobody, write("tt_content", ceDefault, "header"), false},
	})
}
