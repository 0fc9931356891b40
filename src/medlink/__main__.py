from medlink.launch import main

main()
