/// Negative numbers given to options, joined to them: `--width -100` is read as `--width=-100`.
///
/// swift-argument-parser takes any token that starts with `-` for an option, so `--width -100` stopped with
/// "Missing value for '--width <width>'", which hides what is wrong. Joined, the value reaches the option's check,
/// which says that widths are 0 or more. A token is joined when it reads as a negative number or a list of them
/// (`-100`, `-0.5`, `-1e3`, `-inf`, `-5,0,0,0`) and follows a long option given without `=`; nothing after `--`
/// is touched. No option of feedlayout takes a value of that shape that means anything else, and no flag is
/// followed by one in a valid command line (the token would be an unknown option), so valid command lines parse
/// as before.
public enum NegativeValues {
    public static func joined(_ arguments: [String]) -> [String] {
        var result: [String] = []
        result.reserveCapacity(arguments.count)
        var index = 0
        while index < arguments.count {
            let token = arguments[index]
            if token == "--" {
                result += arguments[index...]
                break
            }
            if token.hasPrefix("--"), token.count > 2, !token.contains("="), index + 1 < arguments.count,
                isNegativeNumber(arguments[index + 1])
            {
                result.append(token + "=" + arguments[index + 1])
                index += 2
            } else {
                result.append(token)
                index += 1
            }
        }
        return result
    }

    private static func isNegativeNumber(_ token: String) -> Bool {
        guard token.hasPrefix("-"), let next = token.dropFirst().first else { return false }
        return next.isASCII && (next.isNumber || next == ".") || Double(token) != nil
    }
}
