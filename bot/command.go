package bot

import (
	"strings"
	"unicode"
)

// Command is one slash command found in a note: "/label bug ui" is Name
// "label" and Args ["bug", "ui"].
type Command struct {
	Name string   // lower case, without the slash
	Args []string // the words after the name, quotes removed
	Line int      // the line of the note it is on, from 1
}

// ParseCommands returns the slash commands of a note's text, in order, one
// per line, as people type them:
//
//   - A command is a line whose first non-blank character is "/", followed at
//     once by a name of letters, digits, "_" or "-" and then a blank or the end
//     of the line. Names are read in lower case: "/Label" is "label". So
//     "/usr/bin/env" and "a /label b" are text, not commands.
//   - The rest of the line is split into arguments at blanks. Double quotes
//     group words into one argument ("needs review"), and within them \" is a
//     quote and \\ a backslash. Single quotes group words too, and keep every
//     character between them as it is. Quotes in the middle of a word join
//     what they hold to it. An unclosed quote runs to the end of the line.
//   - Lines inside a fenced code block (between lines starting with ``` or
//     ~~~), lines indented by four spaces or a tab (Markdown code), and quoted
//     lines (starting with ">") are never commands: that is how a person shows
//     a command without running it.
func ParseCommands(text string) []Command {
	var out []Command
	fence := ""
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" && len(line)-len(trimmed) < 4 {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" || strings.HasPrefix(line, "\t") || len(line)-len(trimmed) >= 4 {
			continue
		}
		if cmd, ok := parseLine(strings.TrimSpace(trimmed)); ok {
			cmd.Line = i + 1
			out = append(out, cmd)
		}
	}
	return out
}

// fenceOf returns the fence a line opens or closes (three or more backticks
// or tildes), or "".
func fenceOf(line string) string {
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(line, c) {
			n := len(line) - len(strings.TrimLeft(line, c[:1]))
			return line[:n]
		}
	}
	return ""
}

func isNameRune(r rune) bool {
	return r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-')
}

// parseLine reads one command line, already trimmed.
func parseLine(line string) (Command, bool) {
	if !strings.HasPrefix(line, "/") {
		return Command{}, false
	}
	rest := line[1:]
	end := strings.IndexFunc(rest, func(r rune) bool { return !isNameRune(r) })
	if end < 0 {
		end = len(rest)
	}
	if end == 0 || (end < len(rest) && !unicode.IsSpace(rune(rest[end]))) {
		return Command{}, false
	}
	return Command{Name: strings.ToLower(rest[:end]), Args: splitArgs(rest[end:])}, true
}

// splitArgs splits at blanks outside quotes, as ParseCommands describes.
func splitArgs(s string) []string {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	runes := []rune(s)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote == '"' && r == '\\' && i+1 < len(runes) && (runes[i+1] == '"' || runes[i+1] == '\\'):
			i++
			cur.WriteRune(runes[i])
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inArg = r, true
		case unicode.IsSpace(r):
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
