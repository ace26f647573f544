package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docsLinkRE matches a link to a page of docs/.
var docsLinkRE = regexp.MustCompile(`\]\(docs/([a-z-]+\.md)\)`)

// TestReadmeListsEveryDoc: each page of docs/ is a row of README.md's
// table, so a new page is found from the front.
func TestReadmeListsEveryDoc(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "| [") {
			continue // the table's rows only
		}
		for _, m := range docsLinkRE.FindAllStringSubmatch(line, -1) {
			listed = append(listed, m[1])
		}
	}
	pages, err := filepath.Glob("*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	for _, p := range pages {
		if p != "README.md" && !slices.Contains(listed, p) {
			t.Errorf("README.md's documentation table has no row for docs/%s", p)
		}
	}
}

// TestDeployNamesTheAWSCLIItUses: the prerequisites do not call the AWS
// CLI unneeded when the deploy's own steps run it.
func TestDeployNamesTheAWSCLIItUses(t *testing.T) {
	uses := slices.ContainsFunc(shellLines(t, "deploy.md"), func(c string) bool { return strings.HasPrefix(c, "aws ") })
	doc, err := os.ReadFile("deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| AWS CLI \|.*$`).FindString(string(doc))
	if uses && strings.Contains(row, "not needed to deploy") {
		t.Errorf("deploy.md runs the AWS CLI but its prerequisites say: %s", row)
	}
}

// TestUpgradeRecipesInstallTheirCDK: the upgrade and rollback recipes run
// `npm ci` before `npx cdk`, so each release deploys with the CDK CLI its
// package-lock.json pins, not whatever the last checkout left.
func TestUpgradeRecipesInstallTheirCDK(t *testing.T) {
	doc, err := os.ReadFile("upgrading.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{"## Upgrade\n", "## Roll back\n"} {
		_, body, ok := strings.Cut(string(doc), sec)
		if !ok {
			t.Errorf("upgrading.md has no %q section", strings.TrimSpace(sec))
			continue
		}
		body, _, _ = strings.Cut(body, "\n## ")
		ci, deploy := strings.Index(body, "npm ci"), strings.Index(body, "npx cdk deploy")
		if deploy < 0 || ci < 0 || ci > deploy {
			t.Errorf("%s: `npm ci` does not come before `npx cdk deploy`", strings.TrimSpace(sec))
		}
	}
}
