// CEL's grammar (cel-spec langdef.md) in the rule structure of cel-go's parser: the error
// recovery of ANTLR's generated parser depends on that structure, so drakit reproduces
// cel-go's syntax error lists by running a parser generated from this file (CELParser.py,
// ANTLR 4.13, Python target) over its own token stream.  Regenerate with
// `make cel-grammar`.

grammar CEL;

start : e=expr EOF ;

expr : e=conditionalOr (op='?' e1=conditionalOr ':' e2=expr)? ;

conditionalOr : e=conditionalAnd (ops+='||' e1+=conditionalAnd)* ;

conditionalAnd : e=relation (ops+='&&' e1+=relation)* ;

relation
    : calc
    | relation op=('<'|'<='|'>='|'>'|'=='|'!='|'in') relation
    ;

calc
    : unary
    | calc op=('*'|'/'|'%') calc
    | calc op=('+'|'-') calc
    ;

unary
    : member                  # MemberExpr
    | (ops+='!')+ member      # LogicalNot
    | (ops+='-')+ member      # Negate
    ;

member
    : primary                                                 # PrimaryExpr
    | member op='.' (opt='?')? id=escapeIdent                 # Select
    | member op='.' id=IDENTIFIER open='(' args=exprList? ')' # MemberCall
    | member op='[' (opt='?')? index=expr ']'                 # Index
    ;

primary
    : leadingDot='.'? id=IDENTIFIER                             # Ident
    | leadingDot='.'? id=IDENTIFIER (op='(' args=exprList? ')') # GlobalCall
    | '(' e=expr ')'                                            # Nested
    | op='[' elems=listInit? ','? ']'                           # CreateList
    | op='{' entries=mapInitializerList? ','? '}'               # CreateStruct
    | leadingDot='.'? ids+=IDENTIFIER (ops+='.' ids+=IDENTIFIER)*
        op='{' entries=fieldInitializerList? ','? '}'           # CreateMessage
    | literal                                                   # ConstantLiteral
    ;

exprList : e+=expr (',' e+=expr)* ;

listInit : elems+=optExpr (',' elems+=optExpr)* ;

fieldInitializerList
    : fields+=optField cols+=':' values+=expr (',' fields+=optField cols+=':' values+=expr)*
    ;

optField : (opt='?')? escapeIdent ;

mapInitializerList
    : keys+=optExpr cols+=':' values+=expr (',' keys+=optExpr cols+=':' values+=expr)*
    ;

escapeIdent
    : id=IDENTIFIER     # SimpleIdentifier
    | id=ESC_IDENTIFIER # EscapedIdentifier
    ;

optExpr : (opt='?')? e=expr ;

literal
    : sign=MINUS? tok=NUM_INT   # Int
    | tok=NUM_UINT              # Uint
    | sign=MINUS? tok=NUM_FLOAT # Double
    | tok=STRING                # String
    | tok=BYTES                 # Bytes
    | tok=CEL_TRUE              # BoolTrue
    | tok=CEL_FALSE             # BoolFalse
    | tok=NUL                   # Null
    ;

// Tokens, in vocabulary order (drakit's own lexer produces them; these rules only fix the
// token types and the names that error messages print).

EQUALS : '==';
NOT_EQUALS : '!=';
IN : 'in';
LESS : '<';
LESS_EQUALS : '<=';
GREATER_EQUALS : '>=';
GREATER : '>';
LOGICAL_AND : '&&';
LOGICAL_OR : '||';
LBRACKET : '[';
RPRACKET : ']';
LBRACE : '{';
RBRACE : '}';
LPAREN : '(';
RPAREN : ')';
DOT : '.';
COMMA : ',';
MINUS : '-';
EXCLAM : '!';
QUESTIONMARK : '?';
COLON : ':';
PLUS : '+';
STAR : '*';
SLASH : '/';
PERCENT : '%';
CEL_TRUE : 'true';
CEL_FALSE : 'false';
NUL : 'null';

fragment DIGIT : '0'..'9' ;
fragment LETTER : 'A'..'Z' | 'a'..'z' ;
fragment HEXDIGIT : '0'..'9' | 'a'..'f' | 'A'..'F' ;
fragment EXPONENT : ('e' | 'E') ('+' | '-')? DIGIT+ ;

WHITESPACE : ('\t' | ' ' | '\r' | '\n' | '\u000C')+ -> channel(HIDDEN) ;
COMMENT : '//' (~'\n')* -> channel(HIDDEN) ;

NUM_FLOAT : DIGIT+ '.' DIGIT+ EXPONENT? | DIGIT+ EXPONENT | '.' DIGIT+ EXPONENT? ;
NUM_INT : DIGIT+ | '0x' HEXDIGIT+ ;
NUM_UINT : DIGIT+ ('u' | 'U') | '0x' HEXDIGIT+ ('u' | 'U') ;
STRING : '"' ~('"' | '\n' | '\r')* '"' | '\'' ~('\'' | '\n' | '\r')* '\'' ;
BYTES : ('b' | 'B') STRING ;
IDENTIFIER : (LETTER | '_') (LETTER | DIGIT | '_')* ;
ESC_IDENTIFIER : '`' (LETTER | DIGIT | '_' | '.' | '-' | '/' | ' ')+ '`' ;
