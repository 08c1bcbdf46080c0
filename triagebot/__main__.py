from triagebot.cli import main

main()
