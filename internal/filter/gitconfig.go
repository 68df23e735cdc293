package filter

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// excludesFile returns the file git's core.excludesFile names for the
// repository whose config file is repoConfig, as git finds it: the
// system's config (unless GIT_CONFIG_NOSYSTEM), the user's
// ($XDG_CONFIG_HOME/git/config then ~/.gitconfig, or GIT_CONFIG_GLOBAL
// alone), then the repository's, the last setting winning; unset, it is
// $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore). Include directives
// are not followed. It returns "" when there is none to read.
func excludesFile(repoConfig string) string {
	var files []string
	if !gitBool(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
		sys := os.Getenv("GIT_CONFIG_SYSTEM")
		if sys == "" {
			sys = "/etc/gitconfig"
		}
		files = append(files, sys)
	}
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		files = append(files, g)
	} else {
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, repoConfig)
	val, set := "", false
	for _, f := range files {
		if v, ok := configValue(f, "core", "excludesfile"); ok {
			val, set = v, true
		}
	}
	if !set {
		if xdg == "" {
			return ""
		}
		return filepath.Join(xdg, "git", "ignore")
	}
	if strings.HasPrefix(val, "~/") && home != "" {
		val = filepath.Join(home, val[2:])
	}
	return val
}

func gitBool(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// configValue returns the last value of section.key (both lower case) in
// the git config file name: "[section]" headers, "key = value" lines,
// "#" and ";" comments, double quotes and "\" escapes in values.
func configValue(name, section, key string) (string, bool) {
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var val string
	found := false
	cur := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			hdr := strings.TrimSpace(line[1:end])
			if i := strings.IndexAny(hdr, " \t\""); i >= 0 {
				hdr = hdr[:i] + "\x00" // a subsection: never the one asked for
			}
			cur = strings.ToLower(hdr)
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if cur != section || line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, hasEq := strings.Cut(line, "=")
		if strings.ToLower(strings.TrimSpace(k)) != key {
			continue
		}
		if !hasEq {
			continue // a bare key is a boolean, no path
		}
		val, found = configString(strings.TrimSpace(v)), true
	}
	return val, found
}

// configString decodes a config value: quotes dropped, escapes applied,
// an unquoted comment cut.
func configString(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimRight(b.String(), " \t")
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimRight(b.String(), " \t")
}
