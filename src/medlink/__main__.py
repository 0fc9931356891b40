from medlink.cli import main

main()
