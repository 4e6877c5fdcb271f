/* Stand-in for the Apple SDK's TargetConditionals.h, for compile-only checks of C code
 * (ring's, through rustls) for a macOS target on a machine without the SDK: it says the
 * target is macOS, not iOS, watchOS, tvOS or a simulator. Never used to build a program
 * that runs. */
#ifndef AGENT_TOOLS_TARGET_CONDITIONALS_H
#define AGENT_TOOLS_TARGET_CONDITIONALS_H
#define TARGET_OS_MAC 1
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
#define TARGET_OS_IOS 0
#define TARGET_OS_WATCH 0
#define TARGET_OS_TV 0
#define TARGET_OS_VISION 0
#define TARGET_OS_SIMULATOR 0
#define TARGET_OS_EMBEDDED 0
#endif
